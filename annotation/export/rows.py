"""The exported row of each kind, built from one flat database record.

Gold rows carry the crowd's votes, agreement, worker count, the number of answers, the Dawid-Skene
posterior over the labels and the redundancy policy; extended rows their provenance;
silver rows the model version and its top-k. Every row names its dialogue by `dialogue_hash` (the
dialogue's content hash) so a file can be imported again and find the same dialogue.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from annotation.analysis.records import EXTENDED, GOLD, SILVER
from annotation.splits import SPLITS

COMMON_COLUMNS = [
    "dialogue_id",
    "dialogue_hash",
    "external_id",
    "movie",
    "year",
    "turn",
    "text",
    "label",
    "source",
    "confidence",
    "split",
]
COLUMNS = {
    GOLD: [*COMMON_COLUMNS, "votes", "agreement", "workers", "campaign", "answers", "posterior", "policy"],
    EXTENDED: [*COMMON_COLUMNS, "model_version", "model_version_name", "provenance"],
    SILVER: [*COMMON_COLUMNS, "model_version", "model_version_name", "top_k"],
}


class ExportRecord(NamedTuple):
    """One label of one turn as the query yields it (field order = the values_list order)."""

    dialogue_id: int
    dialogue_hash: str
    external_id: str
    movie: str | None
    year: int | None
    turn: int
    text: str
    label: str
    source: str
    confidence: float | None
    split: str
    model_version: int | None
    model_version_name: str | None
    extra: Any  # provenance (TurnLabel) or top_k (Prediction)


def build_row(kind: str, record: ExportRecord) -> dict[str, Any]:
    row: dict[str, Any] = {
        "dialogue_id": record.dialogue_id,
        "dialogue_hash": record.dialogue_hash,
        "external_id": record.external_id or "",
        "movie": record.movie or "",
        "year": record.year,
        "turn": record.turn,
        "text": record.text,
        "label": record.label,
        "source": record.source,
        "confidence": record.confidence,
        "split": record.split,  # the dialogue's stored split (annotation/splits.py)
    }
    if kind == GOLD:
        provenance = record.extra if isinstance(record.extra, Mapping) else {}
        row["votes"] = dict(provenance.get("votes") or {})
        row["agreement"] = provenance.get("agreement")
        row["workers"] = provenance.get("workers")
        row["campaign"] = provenance.get("campaign")
        # the gold's uncertainty: how many answers it rests on, the Dawid-Skene posterior over the
        # labels, and the redundancy policy that bought the answers (older rows: from the votes)
        row["answers"] = provenance.get("answers", sum(row["votes"].values()) if row["votes"] else None)
        row["posterior"] = dict(provenance.get("posterior") or {})
        row["policy"] = provenance.get("policy") or ""
    else:
        row["model_version"] = record.model_version
        row["model_version_name"] = record.model_version_name or ""
        row["provenance" if kind == EXTENDED else "top_k"] = record.extra if record.extra is not None else {}
    return row


def row_matches(row: Mapping[str, Any], *, min_confidence: float | None, split: str | None) -> bool:
    """The filters the database cannot apply: for gold rows with no stored confidence the crowd's
    agreement standing in for it (and the split, for rows built elsewhere)."""
    if split and row["split"] != split:
        return False
    if min_confidence is None:
        return True
    confidence = row["confidence"] if row["confidence"] is not None else row.get("agreement")
    return confidence is not None and confidence >= min_confidence


__all__ = ["COLUMNS", "SILVER", "SPLITS", "ExportRecord", "build_row", "row_matches"]
