"""The "export_dataset" job: a large export written under MEDIA_ROOT/exports/ with progress.

The file is not public media: the staff-only view `annotation:analysis_export_download` serves it.
"""

import shutil
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from pydantic import Field

from annotation.export.dialogues import TURN
from annotation.export.query import ExportFilters, check_request, count_rows, export_to_path
from annotation.export.writers import HF
from jobs.models import JobRun
from jobs.registry import JobParameters, register
from jobs.runtime import report_progress

EXPORT_DIR = "exports"


def exports_root() -> Path:
    return Path(settings.MEDIA_ROOT) / EXPORT_DIR


def export_file_name(job_id: int, kind: str, fmt: str, layout: str = TURN) -> str:
    suffix = "" if layout == TURN else f"-{layout}"
    return f"export-{job_id}-{kind}{suffix}.{'zip' if fmt == HF else fmt}"


class ExportParameters(JobParameters):
    """What the analysis page's export form sends (it validates the same fields first)."""

    kind: Literal["gold", "extended", "silver"] = Field(title="Dataset")
    format: Literal["csv", "jsonl", "hf"] = Field(title="Format")
    label: str | None = Field(None, max_length=100, title="Only this label")
    min_confidence: float | None = Field(None, ge=0.0, le=1.0, title="Confidence at least")
    source: str | None = Field(None, max_length=20, title="Only this source")
    split: Literal["train", "validation", "test"] | None = Field(None, title="Only this split")
    model_version: int | None = Field(None, ge=1, title="Model version id")
    layout: Literal["turn", "dialogue"] = Field(
        TURN,
        title="Layout",
        description="turn: a record per label; dialogue: a record per dialogue with all its turns (jsonl or hf)",
    )


@register("export_dataset", parameters=ExportParameters)
def export_dataset_job(
    job: JobRun, *, kind: str, format: str, layout: str = TURN, **filter_values: Any
) -> dict[str, Any]:
    """Write a gold, extended or silver dataset (CSV, JSONL or a Hugging Face folder) under
    MEDIA_ROOT/exports/, with progress, for the Export page and the API to offer for download."""
    filters = check_request(kind, format, ExportFilters(**filter_values), layout)
    total = count_rows(kind, filters)
    report_progress(job, 0, total, f"exporting {total} {kind} labels as {format} ({layout} layout)")
    root = exports_root()
    root.mkdir(parents=True, exist_ok=True)
    name = export_file_name(job.pk, kind, format, layout)
    target = root / name
    written = target.with_suffix("") if format == HF else target

    def progress(rows: int) -> None:
        report_progress(job, rows, max(total, rows))

    summary = export_to_path(kind, format, written, filters, on_progress=progress, every=20_000, layout=layout)
    if format == HF:
        shutil.make_archive(str(written), "zip", root_dir=written)
        shutil.rmtree(written)
    report_progress(job, summary.rows, summary.rows, f"wrote {summary.rows} rows")
    return {"file": name, "bytes": target.stat().st_size, "layout": layout, **summary.as_dict()}
