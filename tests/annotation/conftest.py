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
