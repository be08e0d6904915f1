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
                             and idempotent), up to JOB_MAX_ATTEMPTS, then failed with the reason;
                             a job that loses the database (a restart) is queued again at once
    run_in_shards(job, ps)   called by a job function to split its work: one child JobRun (a shard)
                             per parameter set, queued together as a Celery group so every worker of
                             the queue takes some; the parent waits (running, no worker held), its
                             progress is the shards' sum, and the last shard to finish settles it
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connection, transaction
from django.db.models import F, Q, Sum
from django.utils import timezone

from config.celery import app as celery_app
from config.scrub import scrub
from jobs import registry
from jobs.models import JobRun
from jobs.webhooks import events as webhook_events

logger = logging.getLogger(__name__)

# The database went away under a running job (a restart, a failover): transient, not the job's fault.
# The name of the one Celery task of every JobRun (jobs.tasks.run_job_task), which messages carry.
RUN_JOB = "jobs.run_job"
DATABASE_AWAY = (OperationalError, InterfaceError)
DATABASE_RETRY_SECONDS = 5


class JobCannotRun(RuntimeError):
    """A job whose inputs are missing (no model yet, an empty split): it fails with this one-line
    reason instead of a traceback or a meaningless "success"."""


class JobStopped(Exception):
    """Raised inside a running job when it was cancelled or another worker took it over."""


class WaitingForShards(Exception):
    """Raised by run_in_shards once the shards are queued: the parent job stays running, holding
    no worker, until its last shard settles it."""


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


def _run_job_task():
    """The one Celery task of every JobRun (jobs.tasks), found by its name: the task runs this
    module, so this module names it rather than importing it. jobs.apps imports jobs.tasks as
    Django starts, so every process knows the task before it queues one."""
    return celery_app.tasks[RUN_JOB]


def _queue(job_id: int, queue: str) -> None:
    transaction.on_commit(lambda: _run_job_task().apply_async(args=[job_id], queue=queue))


def cancel_job(job: JobRun, *, by: str = "") -> bool:
    """Cancel a queued or running job and its unfinished shards. A queued one never starts; a
    running one stops at its next progress report (within one chunk). False when the job had
    already finished."""
    message = f"cancelled by {by}" if by else "cancelled"
    fields = {"status": JobRun.CANCELLED, "message": message, "finished_at": timezone.now()}
    with transaction.atomic():
        cancelled = JobRun.objects.unfinished().filter(pk=job.pk).update(**fields)
        if cancelled:
            JobRun.objects.unfinished().filter(parent_id=job.pk).update(**fields)
    if cancelled and job.parent_id:
        settle_parent(job.parent_id)
    return bool(cancelled)


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
    except WaitingForShards as waiting:
        return {"job": job.pk, "shards": waiting.args[0]}
    except JobCannotRun as reason:
        _finish(job, JobRun.FAILED, error=scrub(str(reason).splitlines()[0]) if str(reason) else "cannot run")
        return {"job": job.pk, "failed": str(reason)}
    except DATABASE_AWAY as exc:
        _drop_broken_connection()
        try:
            if _requeue_after_database_error(job, exc):
                return {"job": job.pk, "requeued": f"{type(exc).__name__}: {exc}"}
        except DATABASE_AWAY:
            # still away: the job stays running with no heartbeat; the stale-job sweep queues it again
            _drop_broken_connection()
            return {"job": job.pk, "database_away": str(exc)}
        _finish(job, JobRun.FAILED, error=scrub(f"{type(exc).__name__}: {exc}"))
        raise
    except Exception as exc:
        _finish(job, JobRun.FAILED, error=scrub(f"{type(exc).__name__}: {exc}"))
        raise
    _finish(job, JobRun.SUCCEEDED, result=result)
    return result


def _drop_broken_connection() -> None:
    """Close the connection that failed, so the next query connects afresh (a worker runs jobs
    outside any transaction; inside one, as in tests, the caller's transaction owns it)."""
    if not connection.in_atomic_block:
        connection.close()


def _requeue_after_database_error(job: JobRun, error: Exception) -> bool:
    """Queue a job that lost the database again, DATABASE_RETRY_SECONDS later (the database is
    likely restarting), up to JOB_MAX_ATTEMPTS: its work is chunked and idempotent, so the next
    attempt goes on where this one stopped. False when its attempts are used up."""
    limit = _setting("JOB_MAX_ATTEMPTS", 3)
    if job.attempts >= limit:
        return False
    first_line = scrub(str(error).strip().splitlines()[0]) if str(error).strip() else type(error).__name__
    requeued = JobRun.objects.filter(pk=job.pk, status=JobRun.RUNNING, attempts=job.attempts).update(
        status=JobRun.QUEUED,
        message=f"database unavailable ({first_line}); queued again, attempt {job.attempts + 1} of {limit}",
    )
    if requeued:
        queue = registry.get(job.kind).queue
        _run_job_task().apply_async(args=[job.pk], queue=queue, countdown=DATABASE_RETRY_SECONDS)
    return True


def _finish(job: JobRun, status: str, *, result: dict | None = None, error: str = "") -> None:
    # Only the attempt that holds the job may finish it: a cancelled or taken-over job stays as is.
    fields: dict[str, Any] = {"status": status, "error": error, "finished_at": timezone.now()}
    if result is not None:
        fields["result"] = result
    if JobRun.objects.filter(pk=job.pk, status=JobRun.RUNNING, attempts=job.attempts).update(**fields):
        _announce(job, status, fields["finished_at"], error)
    if job.parent_id:
        settle_parent(job.parent_id)


def _announce(job: JobRun, status: str, finished_at, error: str = "") -> None:
    """The job.succeeded / job.failed event of this ending (one per job, attempt and end time)."""
    kind = {JobRun.SUCCEEDED: "job.succeeded", JobRun.FAILED: "job.failed"}.get(status)
    if kind:
        data = {"job": job.pk, "job_kind": job.kind, "status": status, "error": error.splitlines()[0][:300] if error else "",
                "parent": job.parent_id, "finished_at": finished_at.isoformat()}  # fmt: skip
        webhook_events.emit(kind, f"{kind}:{job.pk}:{job.attempts}:{finished_at.isoformat()}", data)


def report_progress(job: JobRun, done: int, total: int | None = None, message: str = "") -> None:
    """Record progress (and a heartbeat). Raises JobStopped when the job was cancelled or another
    attempt took it over: the job function stops at this chunk boundary. Inside `relaying_progress`
    the relay hears of it too."""
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
    if job.parent_id:
        _sum_progress(job.parent_id)
    relay = _progress_relay.get()
    if relay is not None:
        relay(job)


_progress_relay: contextvars.ContextVar[Callable[[JobRun], None] | None] = contextvars.ContextVar(
    "progress_relay", default=None
)


@contextlib.contextmanager
def relaying_progress(relay: Callable[[JobRun], None]) -> Iterator[None]:
    """While inside, each progress report of a job run in this thread (and its context) also calls
    `relay(job)`: a job that runs other jobs in its own process (the demo's build runs each step as
    a child job) shows their progress in its own, instead of one line that stands still for the
    length of its longest step. The relay itself reports with no relay."""

    def once(job: JobRun) -> None:
        token = _progress_relay.set(None)
        try:
            relay(job)
        finally:
            _progress_relay.reset(token)

    token = _progress_relay.set(once)
    try:
        yield
    finally:
        _progress_relay.reset(token)


# --- shards -----------------------------------------------------------------------------------------


def run_in_shards(job: JobRun, shard_parameters: list[dict[str, Any]], message: str = "") -> dict[str, Any]:
    """Run the job's work as shards: a child JobRun of the same kind per parameter set, queued as
    one Celery group on the kind's queue so every worker listening there takes some. Each shard is
    resumable on its own (it is an ordinary job). Raises WaitingForShards: the parent stays
    running without holding a worker and its last shard settles it (succeeded with the shards'
    results combined, failed naming the failed shards, or cancelled).

    Called again (the parent retried or requeued), it creates nothing new: failed or cancelled
    shards are retried, queued ones queued again (a duplicate message is harmless), and when every
    shard has already succeeded it returns the combined result, so the parent finishes at once."""
    spec = registry.get(job.kind)
    shards = list(job.shards.order_by("pk"))
    if not shards:
        checked = [spec.validate(parameters) for parameters in shard_parameters]
        with transaction.atomic():
            shards = [
                JobRun.objects.create(kind=job.kind, parameters=parameters, parent=job, created_by=job.created_by)
                for parameters in checked
            ]
        _queue_group([shard.pk for shard in shards], spec.queue)
    else:
        if all(shard.status == JobRun.SUCCEEDED for shard in shards):
            return combine_results([shard.result for shard in shards])
        for shard in shards:
            if shard.status in (JobRun.FAILED, JobRun.CANCELLED):
                retry_job(shard)
        _queue_group([shard.pk for shard in shards if shard.status == JobRun.QUEUED], spec.queue)
    report_progress(job, job.progress_done, job.progress_total, message or f"running as {len(shards)} shards")
    _sum_progress(job.pk)
    raise WaitingForShards(len(shards))


def _queue_group(job_ids: list[int], queue: str) -> None:
    if not job_ids:
        return
    from celery import group

    task = _run_job_task()
    transaction.on_commit(lambda: group(task.si(pk).set(queue=queue) for pk in job_ids).apply_async())


def _sum_progress(parent_id: int) -> None:
    """The parent's progress is the sum of its shards' (one UPDATE; it also beats its heartbeat)."""
    totals = JobRun.objects.filter(parent_id=parent_id).aggregate(
        done=Sum("progress_done"), total=Sum("progress_total")
    )
    JobRun.objects.filter(pk=parent_id, status=JobRun.RUNNING).update(
        progress_done=totals["done"] or 0, progress_total=totals["total"] or 0, heartbeat_at=timezone.now()
    )


def settle_parent(parent_id: int) -> bool:
    """Finish a sharded job once none of its shards is unfinished. Every shard calls this after it
    finished (after its own commit), so the last one always sees all of them; two at once are safe:
    the update is conditional on the parent still running. True when this call finished it."""
    _sum_progress(parent_id)
    shards = list(JobRun.objects.filter(parent_id=parent_id).order_by("pk"))
    if not shards or any(shard.status in JobRun.UNFINISHED for shard in shards):
        return False
    fields: dict[str, Any] = {"finished_at": timezone.now()}
    failed = [shard for shard in shards if shard.status == JobRun.FAILED]
    if failed:
        reasons = "; ".join(
            f"#{shard.pk}: {shard.error.splitlines()[0] if shard.error else 'failed'}" for shard in failed[:3]
        )
        fields.update(status=JobRun.FAILED, error=f"{len(failed)} of {len(shards)} shards failed ({reasons})")
    elif any(shard.status == JobRun.CANCELLED for shard in shards):
        fields.update(status=JobRun.CANCELLED, message="a shard was cancelled")
    else:
        fields.update(
            status=JobRun.SUCCEEDED,
            result=combine_results([shard.result for shard in shards]),
            message=f"{len(shards)} shards finished",
        )
    return bool(JobRun.objects.filter(pk=parent_id, status=JobRun.RUNNING).update(**fields))


def combine_results(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' results as one: numbers summed key by key (and inside flat dicts of numbers),
    lists concatenated, rates (keys ending in "_per_s") dropped since they do not add up, other
    values kept from the first shard that has them; plus the number of shards."""
    combined: dict[str, Any] = {}
    for result in results:
        for key, value in (result or {}).items():
            if key.endswith("_per_s"):
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                combined[key] = combined.get(key, 0) + value
            elif isinstance(value, list):
                combined[key] = [*combined.get(key, []), *value]
            elif isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
                inner = combined.setdefault(key, {})
                for name, number in value.items():
                    inner[name] = inner.get(name, 0) + number
            else:
                combined.setdefault(key, value)
    combined["shards"] = len(results)
    return combined


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
    stale = (
        JobRun.objects.filter(status=JobRun.RUNNING)
        .filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff))
        .exclude(shards__status__in=JobRun.UNFINISHED)  # a parent waiting for its shards holds no worker
    )
    outcome: dict[str, list[int]] = {"requeued": [], "failed": []}
    for job in stale.only("pk", "kind", "attempts", "heartbeat_at", "parent"):
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
    error = f"worker lost {job.attempts} times (last heartbeat {since}); gave up after {limit} attempts"
    finished_at = timezone.now()
    failed = seen.update(status=JobRun.FAILED, error=error, finished_at=finished_at)
    if failed:
        _announce(job, JobRun.FAILED, finished_at, error)
    if failed and job.parent_id:
        settle_parent(job.parent_id)
    return bool(failed)


def republish_queued_jobs() -> list[int]:
    """Queue a message again for every queued job. Every worker runs this whenever it connects to
    the broker (jobs.worker): the embedded broker forgets a message a killed worker had fetched but
    not started, and a Redis restarted without its data forgets them all, which would leave their
    jobs queued forever. A duplicate message is harmless: only one claim succeeds."""
    queued = list(JobRun.objects.filter(status=JobRun.QUEUED).order_by("pk").values_list("pk", "kind"))
    for job_id, kind in queued:
        _queue(job_id, registry.get(kind).queue)
    return [job_id for job_id, _ in queued]


def _was_requeued(job: JobRun) -> bool:
    return JobRun.objects.filter(pk=job.pk, status=JobRun.QUEUED).exists()
