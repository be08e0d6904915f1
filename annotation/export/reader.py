"""Reading a gold CSV (as `export_dataset --kind gold --format csv` writes it) back into dialogues.

Cells escaped against spreadsheet formulas (`annotation.export.cells`) are unescaped here, so
export -> import gives back the exact text.

Pure: rows become `ImportedDialogue`s, every problem raises ImportFileError naming the file and
line. The database side lives in `annotation.export.importer`.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from annotation.export.cells import BadRecord, checked_records, unescape_cell
from annotation.export.rows import SPLITS
from annotation.ingest.records import dialogue_hash

REQUIRED_COLUMNS = ("turn", "text", "label")


class ImportFileError(ValueError):
    """A file that cannot be imported; the message names the file and the line."""


@dataclass(frozen=True)
class ImportedTurn:
    line: int
    position: int
    text: str
    label: str
    confidence: float | None
    split: str
    provenance: dict[str, Any]


@dataclass
class ImportedDialogue:
    key: str
    line: int
    content_hash: str
    external_id: str = ""
    movie: str = ""
    year: int | None = None
    turns: list[ImportedTurn] = field(default_factory=list)


def content_hash_of(texts: Iterable[str]) -> str:
    """The key of a dialogue that came without `dialogue_hash`: the hash ingestion gives the same
    turn texts, so such a file still finds dialogues ingested from subtitles."""
    return dialogue_hash(texts)


def read_gold_csv(lines: Iterable[str], filename: str = "file") -> Iterator[ImportedDialogue]:
    """Dialogues in file order; the rows of one dialogue must be adjacent."""
    reader = csv.DictReader(lines)
    columns = reader.fieldnames or []
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if "dialogue_hash" not in columns and "dialogue_id" not in columns:
        missing.append("dialogue_hash or dialogue_id")
    if missing:
        raise ImportFileError(f"{filename} line 1: missing column(s) {', '.join(missing)}")
    seen: dict[str, int] = {}
    current: ImportedDialogue | None = None
    for start, row in _unescaped_rows(reader, filename):
        where = f"{filename} line {start}"
        key = (row.get("dialogue_hash") or row.get("dialogue_id") or "").strip()
        if not key:
            raise ImportFileError(f"{where}: the row names no dialogue (dialogue_hash or dialogue_id)")
        if current is None or key != current.key:
            if key in seen:
                raise ImportFileError(
                    f"{where}: dialogue {key} already appeared on line {seen[key]}; keep its rows together"
                )
            if current is not None:
                yield _finished(current, filename)
            seen[key] = start
            current = _new_dialogue(row, key, start, where)
        current.turns.append(_turn(row, start, where))
    if current is not None:
        yield _finished(current, filename)


def _unescaped_rows(reader: csv.DictReader, filename: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows with the writers' formula escape undone; NUL bytes and huge fields name their line."""
    try:
        for start, raw in checked_records(reader):
            yield (
                start,
                {name: unescape_cell(value) if isinstance(value, str) else value for name, value in raw.items()},
            )
    except BadRecord as error:
        raise ImportFileError(f"{filename} line {error.line}: {error.reason}") from error


def _new_dialogue(row: dict[str, str], key: str, line: int, where: str) -> ImportedDialogue:
    year_text = (row.get("year") or "").strip()
    return ImportedDialogue(
        key=key,
        line=line,
        content_hash=(row.get("dialogue_hash") or "").strip(),
        external_id=(row.get("external_id") or "").strip(),
        movie=(row.get("movie") or "").strip(),
        year=_whole(year_text, "year", where) if year_text else None,
    )


def _turn(row: dict[str, str], line: int, where: str) -> ImportedTurn:
    if (row.get("source") or "crowd").strip() != "crowd":
        raise ImportFileError(f"{where}: source {row['source']!r} is not crowd; only gold labels are imported")
    text, label = (row.get("text") or "").strip(), (row.get("label") or "").strip()
    if not text:
        raise ImportFileError(f"{where}: the text is empty")
    if not label:
        raise ImportFileError(f"{where}: the label is empty")
    split = (row.get("split") or "").strip()
    if split and split not in SPLITS:
        raise ImportFileError(f"{where}: split {split!r} is not one of {', '.join(SPLITS)}")
    position = _whole(row.get("turn") or "", "turn", where)
    if position < 0:
        raise ImportFileError(f"{where}: turn {position} is negative")
    return ImportedTurn(
        line=line,
        position=position,
        text=row["text"],
        label=label,
        confidence=_optional_number(row.get("confidence"), "confidence", where),
        split=split,
        provenance=_provenance(row, where),
    )


def _provenance(row: dict[str, str], where: str) -> dict[str, Any]:
    provenance: dict[str, Any] = {}
    votes_text = (row.get("votes") or "").strip()
    if votes_text:
        try:
            votes = json.loads(votes_text)
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"{where}: votes is not JSON ({exc.msg})")
        if not isinstance(votes, dict):
            raise ImportFileError(f"{where}: votes must be a JSON object of label: count")
        provenance["votes"] = votes
    posterior_text = (row.get("posterior") or "").strip()
    if posterior_text and posterior_text != "{}":
        try:
            posterior = json.loads(posterior_text)
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"{where}: posterior is not JSON ({exc.msg})")
        if not isinstance(posterior, dict) or not all(_is_probability(p) for p in posterior.values()):
            raise ImportFileError(f"{where}: posterior must be a JSON object of label: probability between 0 and 1")
        provenance["posterior"] = posterior
    if (row.get("policy") or "").strip():
        provenance["policy"] = row["policy"].strip()
    numbers = (("agreement", _optional_number), ("workers", _optional_whole), ("campaign", _optional_whole))
    for name, parse in (*numbers, ("answers", _optional_whole)):
        value = parse(row.get(name), name, where)
        if value is not None:
            provenance[name] = value
    return provenance


def _is_probability(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0


def _finished(dialogue: ImportedDialogue, filename: str) -> ImportedDialogue:
    positions: dict[int, int] = {}
    for turn in dialogue.turns:
        if turn.position in positions:
            raise ImportFileError(
                f"{filename} line {turn.line}: turn {turn.position} of dialogue {dialogue.key} "
                f"already appeared on line {positions[turn.position]}"
            )
        positions[turn.position] = turn.line
    dialogue.turns.sort(key=lambda turn: turn.position)
    if not dialogue.content_hash:
        dialogue.content_hash = content_hash_of(turn.text for turn in dialogue.turns)
    return dialogue


def _whole(text: str, name: str, where: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ImportFileError(f"{where}: {name} {text!r} is not a whole number")


def _optional_whole(text: str | None, name: str, where: str) -> int | None:
    return _whole(text, name, where) if text and text.strip() else None


def _optional_number(text: str | None, name: str, where: str) -> float | None:
    if not text or not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise ImportFileError(f"{where}: {name} {text!r} is not a number")
