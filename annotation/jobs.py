"""The annotation app's long-running jobs (found by jobs' autodiscovery; the export job is declared
in annotation/export/jobs.py, imported here)."""

from typing import Any

from annotation.export import jobs as export_jobs  # noqa: F401  (declares export_dataset)
from annotation.ingestion import IngestOptions, IngestReport, find_subtitle_files, ingest_file
from jobs.models import JobRun
from jobs.registry import register
from jobs.runtime import report_progress

INGEST_CHUNK_FILES = 20


@register("ingest")
def ingest_job(job: JobRun, paths: list[str], chunk_size: int = INGEST_CHUNK_FILES, **options: Any) -> dict:
    """Ingest `paths` (files or folders) chunk by chunk, reporting progress after each chunk.

    `options` are IngestOptions fields (genres, language, gap_seconds, year, imdb_id, title,
    disabled_rules). Resumable: a re-run skips every file already stored (same sha256)."""
    ingest_options = IngestOptions(**options)
    files = find_subtitle_files(paths)
    report = IngestReport()
    report_progress(job, 0, len(files), f"{len(files)} subtitle files to ingest")
    for first in range(0, len(files), chunk_size):
        for path in files[first : first + chunk_size]:
            report.add(ingest_file(path, ingest_options))
        done = min(first + chunk_size, len(files))
        report_progress(
            job,
            done,
            len(files),
            f"{done}/{len(files)} files: {report.dialogues} dialogues, {report.failed_files} failed",
        )
    return report.as_json()
