"""The dialogue layout: one record per dialogue, every turn of it in order, labels where they exist.

The turn layout (`rows.py`) has one row per label, so a gold file holds only the labeled (last)
turns and the history a dialogue classifier reads is not in it. Here the labeled rows, sorted by
dialogue as the query yields them, are grouped per dialogue and joined with all of the dialogue's
turns from the corpus: a turn with a label of this kind carries it (and the row's other fields),
a turn without one has `label` None. The labels are exactly the rows the turn layout would write
with the same filters; dialogues with none are left out.

`speaker_change` is True for every turn after the first: a turn is what the turn segmenter took
for one speaker's words, so each new turn is a guessed change of speaker (subtitles rarely name
speakers). `start` and `end` are seconds from the start of the film (None when unknown).

Pure: the corpus turns come from an injected `turns_of(dialogue_ids)`; batches of `batch`
dialogues keep memory flat.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.export.rows import COLUMNS

DIALOGUE = "dialogue"
TURN = "turn"
LAYOUTS = (TURN, DIALOGUE)
DIALOGUE_FIELDS = ["dialogue_id", "dialogue_hash", "external_id", "movie", "year", "split"]
CORPUS_TURN_FIELDS = ["turn", "text", "start", "end", "speaker_change"]


def labeled_turn_fields(kind: str) -> list[str]:
    """The per-turn fields taken from a labeled row: the label and what the turn layout adds to it."""
    return [column for column in COLUMNS[kind] if column not in DIALOGUE_FIELDS and column not in ("turn", "text")]


def turn_fields(kind: str) -> list[str]:
    return [*CORPUS_TURN_FIELDS, *labeled_turn_fields(kind)]


@dataclass(frozen=True)
class CorpusTurn:
    position: int
    text: str
    start: float | None
    end: float | None


TurnsOf = Callable[[Sequence[int]], dict[int, list[CorpusTurn]]]


def dialogue_records(
    kind: str, rows: Iterable[dict[str, Any]], turns_of: TurnsOf, *, batch: int = 500
) -> Iterator[dict[str, Any]]:
    """One record per dialogue of `rows` (which arrive sorted by dialogue), in that order."""
    pending: list[list[dict[str, Any]]] = []
    for group in _groups(rows):
        pending.append(group)
        if len(pending) >= batch:
            yield from _records(kind, pending, turns_of)
            pending = []
    if pending:
        yield from _records(kind, pending, turns_of)


def _groups(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    group: list[dict[str, Any]] = []
    for row in rows:
        if group and row["dialogue_id"] != group[0]["dialogue_id"]:
            yield group
            group = []
        group.append(row)
    if group:
        yield group


def _records(kind: str, groups: list[list[dict[str, Any]]], turns_of: TurnsOf) -> Iterator[dict[str, Any]]:
    corpus = turns_of([group[0]["dialogue_id"] for group in groups])
    for group in groups:
        yield dialogue_record(kind, group, corpus.get(group[0]["dialogue_id"], []))


def dialogue_record(kind: str, labeled: Sequence[dict[str, Any]], turns: Sequence[CorpusTurn]) -> dict[str, Any]:
    """The record of one dialogue from its labeled rows and all its turns. A turn with several
    rows (extended: sbert and self) keeps the first, as the turn layout orders them."""
    by_position: dict[int, dict[str, Any]] = {}
    for row in labeled:
        by_position.setdefault(row["turn"], row)
    extra = labeled_turn_fields(kind)
    record = {name: labeled[0][name] for name in DIALOGUE_FIELDS}
    record["turns"] = []
    for index, turn in enumerate(sorted(turns, key=lambda t: t.position)):
        row = by_position.get(turn.position)
        entry = {
            "turn": turn.position,
            "text": turn.text,
            "start": turn.start,
            "end": turn.end,
            "speaker_change": index > 0,
        }
        entry.update({name: row[name] for name in extra} if row else dict.fromkeys(extra))
        record["turns"].append(entry)
    return record
