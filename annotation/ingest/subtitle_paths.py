"""Which subtitle files a command was given, and the genre each belongs to (no Django import).

Genre rule (train_segmenter, extract_pairs): the `--genre` flag when given; else the name of the
folder holding the file when the file was found inside a folder argument and lies below it
(`corpus/Drama/film.srt` → `Drama`, as corpora grouped by genre are laid out); else `unknown`.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

UNKNOWN_GENRE = "unknown"


class NoSubtitleFiles(ValueError):
    """A path that does not exist, or folders that hold no file of the wanted kind."""


@dataclass(frozen=True)
class FoundFile:
    path: Path
    genre: str


def find_files(paths: Iterable[str | Path], suffixes: tuple[str, ...], genre: str = "") -> list[FoundFile]:
    found: list[FoundFile] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes))
            if not inside:
                raise NoSubtitleFiles(f"{path}: no {'/'.join(suffixes)} file in this folder")
            found.extend(FoundFile(p, genre or _folder_genre(p, path)) for p in inside)
        elif path.is_file():
            if not path.name.lower().endswith(suffixes):
                raise NoSubtitleFiles(f"{path}: not a {'/'.join(suffixes)} file")
            found.append(FoundFile(path, genre or UNKNOWN_GENRE))
        else:
            raise NoSubtitleFiles(f"{path}: no such file or folder")
    return found


def _folder_genre(path: Path, root: Path) -> str:
    return path.parent.name if path.parent != root else UNKNOWN_GENRE
