"""Fixtures for the annotation tests: subtitle files written inline into tmp_path."""

from collections.abc import Callable
from pathlib import Path

import pytest


def srt_text(cues: list[tuple[float, float, str]]) -> str:
    """A canonical SubRip document for (start seconds, end seconds, text) cues."""

    def stamp(seconds: float) -> str:
        millis = round(seconds * 1000)
        hours, millis = divmod(millis, 3_600_000)
        minutes, millis = divmod(millis, 60_000)
        secs, millis = divmod(millis, 1000)
        return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"

    return "".join(f"{n}\n{stamp(a)} --> {stamp(b)}\n{text}\n\n" for n, (a, b, text) in enumerate(cues, 1))


def opus_xml(sentences: list[tuple[str | None, list[str], str | None]], meta: str = "") -> str:
    """An OPUS document: each sentence is (start marker value or None, tokens, end marker value or None)."""
    parts = ['<?xml version="1.0" encoding="utf-8"?>', '<document id="1">']
    for number, (start, tokens, end) in enumerate(sentences, 1):
        parts.append(f'<s id="{number}">')
        if start:
            parts.append(f'<time id="T{number}S" value="{start}"/>')
        parts.extend(f'<w id="{number}.{i}">{token}</w>' for i, token in enumerate(tokens, 1))
        if end:
            parts.append(f'<time id="T{number}E" value="{end}"/>')
        parts.append("</s>")
    if meta:
        parts.append(f"<meta>{meta}</meta>")
    parts.append("</document>")
    return "\n".join(parts)


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[..., Path]:
    """write_file("a.srt", text, encoding="utf-8", newline="\\n") -> path; bytes are written as given."""

    def write(name: str, content: str | bytes, encoding: str = "utf-8", newline: str = "\n") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.replace("\n", newline).encode(encoding)
        path.write_bytes(content)
        return path

    return write


@pytest.fixture
def write_srt(write_file) -> Callable[..., Path]:
    def write(name: str, cues: list[tuple[float, float, str]], **kwargs) -> Path:
        return write_file(name, srt_text(cues), **kwargs)

    return write


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    """Every Hugging Face cache under tmp_path for the test, and a check that the user's own
    cache (HF_HOME, default ~/.cache/huggingface) holds exactly the same files afterwards."""
    import os

    datasets = pytest.importorskip("datasets", reason="the datasets package (dev dependency) is not installed")
    user_cache = Path(os.environ.get("HF_HOME") or "~/.cache/huggingface").expanduser()
    before = _files_under(user_cache)
    cache = tmp_path / "hf-cache"
    for name in ("HF_HOME", "HF_DATASETS_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(cache))
    # datasets reads those variables once, on import: point its resolved paths here as well
    for name, value in {
        "HF_CACHE_HOME": cache,
        "HF_DATASETS_CACHE": cache / "datasets",
        "HF_MODULES_CACHE": cache / "modules",
        "DOWNLOADED_DATASETS_PATH": cache / "datasets" / "downloads",
        "EXTRACTED_DATASETS_PATH": cache / "datasets" / "downloads" / "extracted",
    }.items():
        if hasattr(datasets.config, name):
            monkeypatch.setattr(
                datasets.config, name, value if isinstance(getattr(datasets.config, name), Path) else str(value)
            )
    yield cache
    assert _files_under(user_cache) == before, f"the test wrote into the user's Hugging Face cache {user_cache}"


def _files_under(folder: Path) -> set[str]:
    return {str(path) for path in folder.rglob("*")} if folder.exists() else set()
