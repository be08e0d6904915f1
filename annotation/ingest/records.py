"""The small value types that flow through the ingestion pipeline."""

import hashlib
from dataclasses import dataclass, field


class SubtitleFormatError(ValueError):
    """A file that cannot be read; the message names the file and, where known, the line."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


@dataclass(slots=True)
class Cue:
    """One raw SubRip cue (times in seconds)."""

    start: float
    end: float
    text: str


@dataclass(slots=True)
class Sentence:
    """A cleaned sentence. Times are None where the source has none (OPUS sentences inside a block).

    `new_speaker` is set for a dash-led line: the start of another speaker's words."""

    text: str
    start: float | None
    end: float | None
    new_speaker: bool = False


@dataclass(slots=True)
class TurnRecord:
    text: str
    start: float | None
    end: float | None
    sentence_count: int = 1

    @property
    def normalised(self) -> str:
        return normalise_text(self.text)

    @property
    def token_count(self) -> int:
        return len(self.text.split())


@dataclass(slots=True)
class DialogueRecord:
    """A cleaned dialogue of two or more turns, ready to store. `position` counts the candidate
    dialogues of the file in film order (dropped ones included), so positions stay stable."""

    turns: list[TurnRecord]
    position: int
    language: str = ""

    @property
    def start(self) -> float | None:
        return next((t.start for t in self.turns if t.start is not None), None)

    @property
    def end(self) -> float | None:
        return next((t.end for t in reversed(self.turns) if t.end is not None), None)

    @property
    def content_hash(self) -> str:
        return dialogue_hash(t.text for t in self.turns)


@dataclass(slots=True)
class FileMeta:
    """What is known about the film: from the path, the OPUS <meta> block, or the caller."""

    title: str = ""
    year: int | None = None
    imdb_id: str = ""
    genres: list[str] = field(default_factory=list)
    language: str = ""
    duration: str = ""

    @property
    def is_documentary(self) -> bool:
        return any(g.strip().casefold() == "documentary" for g in self.genres)


def normalise_text(text: str) -> str:
    """Case-folded, whitespace-collapsed text: what "the same words" means for duplicate checks."""
    return " ".join(text.casefold().split())


def dialogue_hash(turn_texts) -> str:
    joined = "\n".join(normalise_text(t) for t in turn_texts)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()
