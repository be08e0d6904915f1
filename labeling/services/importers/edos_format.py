"""Read the EDOS crowd-results CSV (the `edos-mturk` format) and compute its figures. Pure, no Django.

Columns: Count, Index, DialogID, Dialog (turns newline-separated, the last one labeled),
Agreed emotion (2/3 vote) (or `-`), Worker 1/2/3 answer (a typed label ends in ` (Other)`).

Two rules of counting, both reported:
- the paper's: answers as given, a typed label is its own category even when it spells a taxonomy
  label ("neutral (Other)" is not "Neutral"); Fleiss' kappa over all distinct answers as given,
  suffix included. This reproduces the paper's Table 4 (8,913 majorities, kappa 0.46).
- ours (`*_normalized`): a typed label equal to a known label, case and spaces aside, counts as it.

Each row is its own crowd item: the same short exchange ("Yes." / "No.") occurs in many films, and
one DialogID can be labeled on two different windows of its turns, so neither the text nor the
DialogID identifies a row. The Index column does (unique in the file), and `row_content_hash` keys
a row's dialogue by it and by the text, so no two rows of the file ever share a dialogue.
"""

import csv
import hashlib
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from annotation.export.cells import BadRecord, checked_records
from annotation.ingest.records import dialogue_hash
from annotation.taxonomy import LABEL_NAMES
from labeling.crowd.agreement import fleiss_kappa, rating_table
from labeling.crowd.majority import majority_vote, majority_vote_normalised, normalise_answer

COLUMNS = (
    "Count",
    "Index",
    "DialogID",
    "Dialog",
    "Agreed emotion (2/3 vote)",
    "Worker 1 answer",
    "Worker 2 answer",
    "Worker 3 answer",
)
ANSWER_COLUMNS = COLUMNS[5:]
OTHER_SUFFIX = " (Other)"
NO_MAJORITY = "-"
HASH_NAMESPACE = "edos-mturk"


# What the source says of itself (the EDOS data's README and LICENSE.txt): the study report and
# the dataset card state it for a campaign imported from this format (Campaign.source_*).
FORMAT_NAME = "edos-mturk"
SOURCE_LICENSE = "cc-by-4.0"  # Creative Commons Attribution 4.0, as the Hugging Face Hub names it
SOURCE_CITATION = """@inproceedings{welivita-etal-2021-large,
    title = "A Large-Scale Dataset for Empathetic Response Generation",
    author = "Welivita, Anuradha and Xie, Yubo and Pu, Pearl",
    booktitle = "Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing",
    year = "2021",
    publisher = "Association for Computational Linguistics",
}"""


class EdosFormatError(ValueError):
    pass


@dataclass(frozen=True)
class EdosAnswer:
    raw: str  # as given in the file, suffix included
    text: str  # the label, without the suffix
    typed: bool  # entered through "Other"


@dataclass(frozen=True)
class EdosRow:
    line: int  # the file line the record starts on
    index: str  # the Index column: the row's identity in the EDOS corpus, unique in the file
    dialog_id: str
    turns: tuple[str, ...]
    agreed: str | None
    answers: tuple[EdosAnswer, ...]


def parse_answer(raw: str) -> EdosAnswer:
    raw = raw.strip()
    if raw.endswith(OTHER_SUFFIX):
        return EdosAnswer(raw, raw[: -len(OTHER_SUFFIX)].strip(), True)
    return EdosAnswer(raw, raw, False)


def read_edos(content: str, source: str) -> list[EdosRow]:
    """Every row, or EdosFormatError naming the file and line of the first bad one."""
    reader = csv.reader(io.StringIO(content, newline=""))
    header = next(reader, None)
    if header is None or tuple(name.strip() for name in header) != COLUMNS:
        raise EdosFormatError(f"{source}: line 1: expected the columns {', '.join(COLUMNS)}")
    rows = []
    line_of_index: dict[str, int] = {}
    try:
        for line, record in checked_records(reader):
            _add_row(rows, line_of_index, record, source, line)
    except BadRecord as error:
        raise EdosFormatError(f"{source}: line {error.line}: {error.reason}") from error
    if not rows:
        raise EdosFormatError(f"{source}: no rows")
    return rows


def _add_row(rows: list[EdosRow], line_of_index: dict[str, int], record: list[str], source: str, line: int) -> None:
    if not any(field.strip() for field in record):
        return
    row = _row(record, f"{source}: line {line}", line)
    if row.index in line_of_index:
        raise EdosFormatError(f"{source}: line {line}: Index {row.index!r} repeats line {line_of_index[row.index]}")
    line_of_index[row.index] = line
    rows.append(row)


def row_content_hash(row: EdosRow) -> str:
    """The content hash of the row's dialogue, namespaced by the row's identity: two rows with
    the same text stay two dialogues, while the same row imported again (from an edited copy of
    the file) finds the dialogue it created the first time."""
    key = f"{HASH_NAMESPACE}:{row.index}:{dialogue_hash(row.turns)}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _row(record: list[str], where: str, line: int) -> EdosRow:
    if len(record) != len(COLUMNS):
        raise EdosFormatError(f"{where}: expected {len(COLUMNS)} fields, found {len(record)}")
    fields = dict(zip(COLUMNS, record, strict=True))
    index = fields["Index"].strip()
    dialog_id = fields["DialogID"].strip()
    turns = tuple(turn.strip() for turn in fields["Dialog"].splitlines() if turn.strip())
    answers = tuple(parse_answer(fields[column]) for column in ANSWER_COLUMNS)
    if not index:
        raise EdosFormatError(f"{where}: empty Index")
    if not dialog_id:
        raise EdosFormatError(f"{where}: empty DialogID")
    if len(dialog_id) > 64:
        raise EdosFormatError(f"{where}: DialogID longer than 64 characters")
    if not turns:
        raise EdosFormatError(f"{where}: empty Dialog")
    for column, answer in zip(ANSWER_COLUMNS, answers, strict=True):
        if not answer.text:
            raise EdosFormatError(f"{where}: empty {column}")
    agreed = fields["Agreed emotion (2/3 vote)"].strip()
    expected = majority_vote([a.raw for a in answers]).label or NO_MAJORITY
    if agreed != expected:
        raise EdosFormatError(f"{where}: 'Agreed emotion' is {agreed!r} but the three answers give {expected!r}")
    return EdosRow(line, index, dialog_id, turns, None if agreed == NO_MAJORITY else agreed, answers)


def summarise(rows: Sequence[EdosRow], known_labels: Mapping[str, str] | None = None) -> dict:
    """The file's figures under the paper's rule and under ours (see the module docstring)."""
    as_given = [[a.raw for a in row.answers] for row in rows]
    normalised_answers = [[a.text for a in row.answers] for row in rows]
    majority = sum(1 for answers in as_given if majority_vote(answers).is_majority)
    normalised = [majority_vote_normalised(answers, known_labels) for answers in normalised_answers]
    majority_normalised = sum(1 for result in normalised if result.is_majority)
    kappa = fleiss_kappa(rating_table(as_given))
    normalised_kappa = fleiss_kappa(rating_table([_expand(r.votes) for r in normalised]))
    return {
        "dialogues": len(rows),
        "majority": majority,
        "majority_rate": round(majority / len(rows), 4),
        "majority_normalized": majority_normalised,
        "majority_normalized_rate": round(majority_normalised / len(rows), 4),
        "fleiss_kappa": round(kappa, 4) if kappa is not None else None,
        "fleiss_kappa_normalized": round(normalised_kappa, 4) if normalised_kappa is not None else None,
        "other_answers": sum(1 for row in rows for a in row.answers if a.typed),
        "other_answers_matching_a_label": _typed_matching(rows, known_labels),
        "duplicate_dialog_ids": _duplicates(row.dialog_id for row in rows),
        "duplicate_texts": _duplicates(dialogue_hash(row.turns) for row in rows),
    }


def _typed_matching(rows: Iterable[EdosRow], known_labels: Mapping[str, str] | None) -> int:
    known = set((known_labels or {}).values()) | set(LABEL_NAMES)
    return sum(1 for row in rows for a in row.answers if a.typed and normalise_answer(a.text, known_labels) in known)


def _expand(votes: Mapping[str, int]) -> list[str]:
    return [answer for answer, count in votes.items() for _ in range(count)]


def _duplicates(values: Iterable[str]) -> int:
    return sum(count - 1 for count in Counter(values).values() if count > 1)
