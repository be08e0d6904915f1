"""The job runtime: queue a job, run it in a worker, report progress, cancel, retry, recover.

Every job is executed by a Celery worker process (`python manage.py run_worker`), never in the web
request or the command that queued it. The flow:

    start_job(kind, params)  validates params with the kind's schema, records a JobRun (queued),
                             and queues `jobs.run_job` on the kind's queue after the commit
    run_job(id)              in the worker: claims the JobRun (queued -> running, attempts + 1) with
                             a conditional UPDATE, beats a heartbeat while the function runs, and
                             records succeeded / failed (with the reason) / cancelled
    report_progress(job,..)  called by the function after each chunk; raises JobStopped when the
                             job was cancelled or taken over, so cancel stops it within one chunk
    requeue_stale_jobs()     run by every worker every JOB_SWEEP_SECONDS: a running job with no
                             heartbeat for JOB_STALE_SECONDS is queued again (its work is chunked
                             and idempotent), up to JOB_MAX_ATTEMPTS, then failed with the reason
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from jobs import registry
from jobs.models import JobRun

logger = logging.getLogger(__name__)


class JobCannotRun(RuntimeError):
    """A job whose inputs are missing (no model yet, an empty split): it fails with this one-line
    reason instead of a traceback or a meaningless "success"."""


class JobStopped(Exception):
    """Raised inside a running job when it was cancelled or another worker took it over."""


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


# --- queueing -------------------------------------------------------------------------------------


def start_job(kind: str, parameters: dict[str, Any] | None = None, *, user=None) -> JobRun:
    """Validate the parameters, record a JobRun and queue it once the current transaction commits.
    Raises registry.UnknownJob or registry.InvalidParameters (nothing is recorded then)."""
    spec = registry.get(kind)
    checked = spec.validate(parameters)
    job = JobRun.objects.create(kind=kind, parameters=checked, created_by=user)
    _queue(job.pk, spec.queue)
    return job


def start_scheduled(kind: str, parameters: dict[str, Any]) -> int | None:
    """Queue `kind` for a schedule: the new JobRun's id, or None when an unfinished one with the
    same parameters exists already."""
    checked = registry.get(kind).validate(parameters)
    if JobRun.objects.unfinished().filter(kind=kind, parameters=checked).exists():
        return None
    return start_job(kind, parameters).pk


def _queue(job_id: int, queue: str) -> None:
    from jobs.tasks import run_job_task

    transaction.on_commit(lambda: run_job_task.apply_async(args=[job_id], queue=queue))


def cancel_job(job: JobRun, *, by: str = "") -> bool:
    """Cancel a queued or running job. A queued one never starts; a running one stops at its next
    progress report (within one chunk). False when the job had already finished."""
    message = f"cancelled by {by}" if by else "cancelled"
    return bool(
        JobRun.objects.unfinished()
        .filter(pk=job.pk)
        .update(status=JobRun.CANCELLED, message=message, finished_at=timezone.now())
    )


def retry_job(job: JobRun) -> bool:
    """Queue a failed or cancelled job again, with fresh attempts; resumable jobs skip the work
    already done. False when the job is not failed or cancelled."""
    retried = JobRun.objects.filter(pk=job.pk, status__in=(JobRun.FAILED, JobRun.CANCELLED)).update(
        status=JobRun.QUEUED, attempts=0, error="", message="queued again", heartbeat_at=None, finished_at=None
    )
    if retried:
        _queue(job.pk, registry.get(job.kind).queue)
    return bool(retried)


# --- running (in the worker) ------------------------------------------------------------------------


def run_job(job_id: int, *, heartbeat: bool = True) -> dict[str, Any]:
    """Run a recorded job in this process. The claim is a conditional update, so two workers handed
    the same id (a redelivered message, a requeue) never both run it."""
    now = timezone.now()
    claimed = JobRun.objects.filter(pk=job_id, status=JobRun.QUEUED).update(
        status=JobRun.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1, error=""
    )
    if not claimed:
        return {"job": job_id, "skipped": "not queued"}
    job = JobRun.objects.get(pk=job_id)
    beat = Heartbeat(job.pk, job.attempts, _setting("JOB_HEARTBEAT_SECONDS", 15)) if heartbeat else None
    if beat:
        beat.start()
    try:
        return _execute(job)
    finally:
        if beat:
            beat.stop()


def _execute(job: JobRun) -> dict[str, Any]:
    try:
        result = registry.get(job.kind).function(job, **job.parameters) or {}
    except JobStopped:
        return {"job": job.pk, "stopped": True}
    except JobCannotRun as reason:
        _finish(job, JobRun.FAILED, error=str(reason).splitlines()[0] if str(reason) else "cannot run")
        return {"job": job.pk, "failed": str(reason)}
    except Exception as exc:
        _finish(job, JobRun.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    _finish(job, JobRun.SUCCEEDED, result=result)
    return result


def _finish(job: JobRun, status: str, *, result: dict | None = None, error: str = "") -> None:
    # Only the attempt that holds the job may finish it: a cancelled or taken-over job stays as is.
    fields: dict[str, Any] = {"status": status, "error": error, "finished_at": timezone.now()}
    if result is not None:
        fields["result"] = result
    JobRun.objects.filter(pk=job.pk, status=JobRun.RUNNING, attempts=job.attempts).update(**fields)


def report_progress(job: JobRun, done: int, total: int | None = None, message: str = "") -> None:
    """Record progress (and a heartbeat). Raises JobStopped when the job was cancelled or another
    attempt took it over: the job function stops at this chunk boundary."""
    fields: dict[str, Any] = {"progress_done": done, "heartbeat_at": timezone.now()}
    if total is not None:
        fields["progress_total"] = total
    if message:
        fields["message"] = message[:300]
    mine = JobRun.objects.unfinished().filter(pk=job.pk, attempts=job.attempts)
    if not mine.update(**fields):
        raise JobStopped(f"job {job.pk} was cancelled or taken over")
    for name, value in fields.items():
        setattr(job, name, value)


class Heartbeat(threading.Thread):
    """Beats JobRun.heartbeat_at every few seconds while a job runs, even inside a long chunk."""

    def __init__(self, job_id: int, attempt: int, every: float):
        super().__init__(name=f"job-{job_id}-heartbeat", daemon=True)
        self.job_id, self.attempt, self.every = job_id, attempt, every
        self._done = threading.Event()

    def run(self) -> None:
        try:
            while not self._done.wait(self.every):
                self.beat()
        finally:
            connection.close()

    def beat(self) -> None:
        try:
            JobRun.objects.filter(pk=self.job_id, attempts=self.attempt, status=JobRun.RUNNING).update(
                heartbeat_at=timezone.now()
            )
        except Exception:  # a database hiccup must not kill the job; the next beat tries again
            logger.exception("heartbeat of job %s failed", self.job_id)
            close_old_connections()

    def stop(self) -> None:
        self._done.set()
        self.join(timeout=5)


# --- recovery ---------------------------------------------------------------------------------------


def requeue_stale_jobs() -> dict[str, list[int]]:
    """Queue again every running job whose worker stopped beating (killed, machine rebooted), or
    fail it with the reason once it used up JOB_MAX_ATTEMPTS. Safe to run in many workers at once:
    each change is a conditional update on the heartbeat it saw."""
    cutoff = timezone.now() - timedelta(seconds=_setting("JOB_STALE_SECONDS", 120))
    stale = JobRun.objects.filter(status=JobRun.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    outcome: dict[str, list[int]] = {"requeued": [], "failed": []}
    for job in stale.only("pk", "kind", "attempts", "heartbeat_at"):
        if _recover(job):
            outcome["requeued" if _was_requeued(job) else "failed"].append(job.pk)
    return outcome


def _recover(job: JobRun) -> bool:
    limit = _setting("JOB_MAX_ATTEMPTS", 3)
    seen = JobRun.objects.filter(pk=job.pk, status=JobRun.RUNNING, attempts=job.attempts, heartbeat_at=job.heartbeat_at)
    since = job.heartbeat_at.isoformat(timespec="seconds") if job.heartbeat_at else "its start"
    if job.attempts < limit:
        changed = seen.update(
            status=JobRun.QUEUED,
            message=f"worker lost (no heartbeat since {since}); queued again, attempt {job.attempts + 1} of {limit}",
        )
        if changed:
            _queue(job.pk, registry.get(job.kind).queue)
        return bool(changed)
    return bool(
        seen.update(
            status=JobRun.FAILED,
            error=f"worker lost {job.attempts} times (last heartbeat {since}); gave up after {limit} attempts",
            finished_at=timezone.now(),
        )
    )


def republish_queued_jobs() -> list[int]:
    """Queue a message again for every queued job. A worker on the embedded broker runs this when it
    starts: that broker forgets a message a killed worker had fetched but not started, which would
    leave its job queued forever. A duplicate message is harmless: only one claim succeeds."""
    queued = list(JobRun.objects.filter(status=JobRun.QUEUED).order_by("pk").values_list("pk", "kind"))
    for job_id, kind in queued:
        _queue(job_id, registry.get(kind).queue)
    return [job_id for job_id, _ in queued]


def _was_requeued(job: JobRun) -> bool:
    return JobRun.objects.filter(pk=job.pk, status=JobRun.QUEUED).exists()
