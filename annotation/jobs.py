"""The annotation app's long-running jobs (found by jobs' autodiscovery; the export job is declared
in annotation/export/jobs.py, imported here)."""

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from annotation.export import jobs as export_jobs  # noqa: F401  (declares export_dataset)
from annotation.ingest.cleaning import RULE_NAMES
from annotation.ingestion import IngestOptions, IngestReport, find_subtitle_files, ingest_file
from jobs.models import JobRun
from jobs.registry import JobParameters, register
from jobs.runtime import report_progress, run_in_shards

INGEST_CHUNK_FILES = 20
INGEST_SHARD_FILES = 500  # a directory of more files than this is ingested as shards (one job each)


class IngestParameters(JobParameters):
    """The `ingest` command's options; the job is started by the command, never from a form."""

    paths: list[str] = Field(min_length=1, max_length=100_000, title="Files or folders")
    chunk_size: int = Field(INGEST_CHUNK_FILES, ge=1, le=10_000, title="Files per chunk")
    genres: list[str] = Field([], max_length=20, title="Genres")
    language: str = Field("en", min_length=2, max_length=8, title="Language hint")
    gap_seconds: float | None = Field(None, gt=0, le=3600, title="Dialogue gap (s)")
    year: int | None = Field(None, ge=1870, le=2100, title="Year")
    imdb_id: str = Field("", max_length=20, title="IMDb id")
    title: str = Field("", max_length=300, title="Title")
    disabled_rules: list[str] = Field([], title="Cleaning rules switched off")
    segmenter: str = Field("", max_length=1000, title="Turn segmenter", description="punctuation or svm:PATH")
    files_per_shard: int = Field(
        INGEST_SHARD_FILES, ge=1, le=100_000, title="Files per shard",
        description="more files than this are split into shard jobs that every worker of the queue takes",
    )  # fmt: skip

    @field_validator("disabled_rules")
    @classmethod
    def _known_rules(cls, names: list[str]) -> list[str]:
        unknown = sorted(set(names) - set(RULE_NAMES))
        if unknown:
            raise ValueError(f"unknown cleaning rule(s) {', '.join(unknown)}; known: {', '.join(RULE_NAMES)}")
        return names


@register("ingest", parameters=IngestParameters)
def ingest_job(
    job: JobRun,
    paths: list[str],
    chunk_size: int = INGEST_CHUNK_FILES,
    files_per_shard: int = INGEST_SHARD_FILES,
    **options: Any,
) -> dict:
    """Ingest `paths` (files or folders) chunk by chunk, reporting progress after each chunk.

    `options` are IngestOptions fields (genres, language, gap_seconds, year, imdb_id, title,
    disabled_rules). Resumable: a re-run skips every file already stored (same sha256). More
    than `files_per_shard` files are split into shard jobs (cut between folders where possible, so
    one movie's files stay together), run by every worker of the queue."""
    ingest_options = IngestOptions(**options)
    files = find_subtitle_files(paths)
    if job.parent_id is None and len(files) > files_per_shard:
        shards = [
            {"paths": [str(path) for path in batch], "chunk_size": chunk_size, "files_per_shard": len(batch), **options}
            for batch in shard_files(files, files_per_shard)
        ]
        return run_in_shards(job, shards, message=f"{len(files)} subtitle files in {len(shards)} shards")
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


def shard_files(files: list[Path], size: int) -> list[list[Path]]:
    """Consecutive batches of about `size` files; a batch ends at a change of folder when one comes
    in the second half of the batch (OpenSubtitles keeps one movie per folder)."""
    batches, start = [], 0
    while start < len(files):
        end = min(start + size, len(files))
        if end < len(files):
            for cut in range(end, start + size // 2, -1):
                if files[cut].parent != files[cut - 1].parent:
                    end = cut
                    break
        batches.append(files[start:end])
        start = end
    return batches
