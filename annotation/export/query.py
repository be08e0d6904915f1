"""The Django side of an export: one streamed query per kind, feeding the pure row builders."""

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from annotation.analysis import queries
from annotation.analysis.records import GOLD, KINDS, SILVER
from annotation.export.card import agreement_figures, card_metadata, dataset_card, dataset_license
from annotation.export.dialogues import LAYOUTS, TURN, CorpusTurn, dialogue_records
from annotation.export.rows import SPLITS, ExportRecord, build_row, row_matches
from annotation.export.writers import (
    FORMATS,
    HF,
    ExportSummary,
    check_layout,
    csv_lines,
    jsonl_lines,
    write_rows,
)
from annotation.models import AuditEntry, Label, Turn
from annotation.record import audit

CHUNK_SIZE = 2000
SILVER_SOURCE = "model"
RECORD_FIELDS = (
    "turn__dialogue_id",
    "turn__dialogue__content_hash",
    "turn__dialogue__external_id",
    "turn__dialogue__movie__title",
    "turn__dialogue__movie__year",
    "turn__position",
    "turn__text",
    "label__name",
)


class ExportError(ValueError):
    """A request for an export that cannot be made (unknown kind, no model version, ...)."""


@dataclass(frozen=True)
class ExportFilters:
    label: str | None = None
    min_confidence: float | None = None
    source: str | None = None
    split: str | None = None
    model_version: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_request(kind: str, fmt: str, filters: ExportFilters, layout: str = TURN) -> ExportFilters:
    """Validate and complete the request: silver gets the newest dialogue model when none is named."""
    if kind not in KINDS:
        raise ExportError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if fmt not in FORMATS:
        raise ExportError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if layout not in LAYOUTS:
        raise ExportError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    try:
        check_layout(fmt, layout)
    except ValueError as exc:
        raise ExportError(str(exc))
    if filters.split and filters.split not in SPLITS:
        raise ExportError(f"split must be one of {', '.join(SPLITS)}, not {filters.split!r}")
    allowed_sources = (SILVER_SOURCE,) if kind == SILVER else queries.SOURCES_OF_KIND[kind]
    if filters.source and filters.source not in allowed_sources:
        allowed = ", ".join(allowed_sources)
        raise ExportError(f"source {filters.source!r} is not part of {kind} labels ({allowed})")
    if kind == SILVER:
        version = queries.silver_version(filters.model_version)
        if version is None:
            raise ExportError(
                f"model version {filters.model_version} does not exist"
                if filters.model_version
                else "no dialogue classifier version exists yet: silver labels need one"
            )
        filters = ExportFilters(**{**filters.as_dict(), "model_version": version.pk})
    return filters


def export_queryset(kind: str, filters: ExportFilters) -> QuerySet:
    labels = queries.labels_of_kind(kind, filters.model_version)
    if kind != SILVER:
        if filters.source:
            labels = labels.filter(source=filters.source)
        if filters.model_version:
            labels = labels.filter(model_version_id=filters.model_version)
    if filters.split:
        labels = labels.filter(turn__dialogue__split=filters.split)
    if filters.label:
        labels = labels.filter(label__in=Label.objects.named(filters.label))
    if filters.min_confidence is not None:
        # gold rows with no confidence fall back to the crowd's agreement, checked in Python
        keep_null = Q(confidence__isnull=True) if kind == GOLD else Q(pk__in=[])
        labels = labels.filter(Q(confidence__gte=filters.min_confidence) | keep_null)
    return labels.order_by("turn__dialogue_id", "turn__position", "pk")


def export_rows(kind: str, filters: ExportFilters) -> Iterator[dict[str, Any]]:
    """Rows of one kind, sorted by dialogue and turn, streamed from the database in chunks."""
    if kind == SILVER:
        fields = (
            *RECORD_FIELDS,
            "confidence",
            "turn__dialogue__split",
            "model_version_id",
            "model_version__name",
            "top_k",
        )
    else:
        fields = (
            *RECORD_FIELDS,
            "source",
            "confidence",
            "turn__dialogue__split",
            "model_version_id",
            "model_version__name",
            "provenance",
        )
    for values in export_queryset(kind, filters).values_list(*fields).iterator(chunk_size=CHUNK_SIZE):
        record = _record(kind, values)
        row = build_row(kind, record)
        if row_matches(row, min_confidence=filters.min_confidence, split=filters.split):
            yield row


def _record(kind: str, values: tuple) -> ExportRecord:
    if kind == SILVER:
        *common, confidence, split, model_version, version_name, top_k = values
        return ExportRecord(*common, SILVER_SOURCE, confidence, split, model_version, version_name, top_k)
    return ExportRecord(*values)


def corpus_turns(dialogue_ids: Sequence[int]) -> dict[int, list[CorpusTurn]]:
    """Every turn of these dialogues, in order: the dialogue layout's `turns_of`."""
    turns: dict[int, list[CorpusTurn]] = {dialogue_id: [] for dialogue_id in dialogue_ids}
    rows = Turn.objects.filter(dialogue_id__in=list(dialogue_ids)).order_by("dialogue_id", "position")
    for dialogue_id, position, text, start, end in rows.values_list(
        "dialogue_id", "position", "text", "start", "end"
    ).iterator(chunk_size=CHUNK_SIZE):
        turns[dialogue_id].append(CorpusTurn(position, text, start, end))
    return turns


def count_rows(kind: str, filters: ExportFilters) -> int:
    """The rows the database will hand over (the Python-side filters may drop a few)."""
    return export_queryset(kind, filters).count()


def label_names() -> list[str]:
    return queries.taxonomy_order()


def stream_export(kind: str, fmt: str, filters: ExportFilters, layout: str = TURN) -> Iterator[str]:
    """CSV or JSONL text in chunks, for a streaming HTTP response."""
    if layout != TURN:
        return jsonl_lines(kind, dialogue_records(kind, export_rows(kind, filters), corpus_turns), layout=layout)
    lines = csv_lines if fmt == "csv" else jsonl_lines
    return lines(kind, export_rows(kind, filters))


def export_to_path(
    kind: str,
    fmt: str,
    out: Path,
    filters: ExportFilters,
    *,
    on_progress: Callable[[int], None] | None = None,
    every: int = 10_000,
    layout: str = TURN,
) -> ExportSummary:
    """Write an export to `out` (a file, or a folder for hf) and return what was written."""
    filters = check_request(kind, fmt, filters, layout)
    names = label_names()

    def progress(summary: ExportSummary) -> None:
        if on_progress and summary.rows % every == 0:
            on_progress(summary.rows)

    with_log = kind != SILVER

    computed: dict[tuple, list] = {}

    def figures_of(summary: ExportSummary) -> list:
        """The campaigns' figures, computed once for the card and its metadata (a study report each)."""
        key = tuple(sorted(summary.campaigns))
        if key not in computed:
            computed[key] = agreement_figures(list(key))
        return computed[key]

    def card(summary: ExportSummary) -> str:
        return dataset_card(
            summary,
            label_names=names,
            filters=filters.as_dict(),
            layout=layout,
            figures=figures_of(summary),
            license_id=settings.DATASET_LICENSE,
            audit_log=with_log,
        )

    def metadata(summary: ExportSummary) -> dict:
        return card_metadata(summary, license_id=dataset_license(settings.DATASET_LICENSE, figures_of(summary)))

    summary = write_rows(
        kind,
        fmt,
        export_rows(kind, filters),
        out,
        label_names=names,
        card=card,
        metadata=metadata,
        on_row=progress,
        layout=layout,
        turns_of=corpus_turns,
    )
    if fmt == HF and with_log:
        write_audit_log(Path(out) / AUDIT_LOG_FILE, export_queryset(kind, filters))
    if on_progress:
        on_progress(summary.rows)
    return summary


AUDIT_LOG_FILE = "audit_log.ndjson"
AUDIT_FIELDS = ("at", "kind", "actor_kind", "actor", "on_behalf_of", "target_type", "target_id")
AUDIT_FIELDS += ("campaign_id", "turn_id", "old", "new", "reason")


def write_audit_log(path: Path, labels: QuerySet) -> int:
    """The audit entries about the exported labels (annotation.record.audit.DATASET_KINDS: gold changes,
    adjudications, proposals), oldest first, one JSON object a line; returns how many."""
    about_turns = AuditEntry.objects.filter(kind__in=audit.DATASET_KINDS, turn_id__in=labels.values("turn_id"))
    proposals = AuditEntry.objects.filter(kind__in=(audit.PROPOSAL_ACCEPTED, audit.PROPOSAL_REFUSED))
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        for values in (about_turns | proposals).order_by("at", "pk").values(*AUDIT_FIELDS).iterator(chunk_size=2000):
            values["at"] = values["at"].isoformat()
            handle.write(json.dumps(values, ensure_ascii=False, sort_keys=True) + "\n")
            written += 1
    return written
