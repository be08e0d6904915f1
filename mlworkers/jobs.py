"""Named long-running jobs, run through one Celery task that takes a JobRun id.

A job is a plain function `fn(job: JobRun, **parameters) -> dict`. Register it with `@register("kind")`;
`start_job("kind", {...})` records a JobRun and queues it after the surrounding transaction commits.
The function reports progress with `report_progress(job, done, total, message)`. With no broker the
task runs in-process (settings: CELERY_TASK_ALWAYS_EAGER), so the same code serves the embedded
default and real workers.
"""

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from mlworkers.models import JobRun

JobFunction = Callable[..., dict[str, Any]]
_REGISTRY: dict[str, tuple[JobFunction, str]] = {}


class UnknownJob(KeyError):
    pass


def register(kind: str, *, queue: str = "default") -> Callable[[JobFunction], JobFunction]:
    """Register `fn` as the job `kind`; torch jobs pass queue="ml" so GPU workers take them."""

    def decorator(fn: JobFunction) -> JobFunction:
        _REGISTRY[kind] = (fn, queue)
        return fn

    return decorator


def job_function(kind: str) -> tuple[JobFunction, str]:
    _load_job_modules()
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise UnknownJob(f"no job named {kind!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def start_job(kind: str, parameters: dict[str, Any] | None = None, *, user=None) -> JobRun:
    """Record a JobRun and queue it once the current transaction commits."""
    from mlworkers.tasks import run_job_task

    _, queue = job_function(kind)
    job = JobRun.objects.create(kind=kind, parameters=parameters or {}, created_by=user)
    transaction.on_commit(lambda: run_job_task.apply_async(args=[job.pk], queue=queue))
    return job


def run_job(job_id: int) -> dict[str, Any]:
    """Run a recorded job in this process. Claimed with a conditional update so two workers
    handed the same id never both run it."""
    claimed = JobRun.objects.filter(pk=job_id, status=JobRun.QUEUED).update(
        status=JobRun.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return {"job": job_id, "skipped": "not queued"}
    job = JobRun.objects.get(pk=job_id)
    fn, _ = job_function(job.kind)
    try:
        result = fn(job, **job.parameters) or {}
    except Exception as exc:
        JobRun.objects.filter(pk=job_id).update(
            status=JobRun.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        raise
    JobRun.objects.filter(pk=job_id).update(status=JobRun.SUCCEEDED, result=result, finished_at=timezone.now())
    return result


def report_progress(job: JobRun, done: int, total: int | None = None, message: str = "") -> None:
    fields: dict[str, Any] = {"progress_done": done}
    if total is not None:
        fields["progress_total"] = total
    if message:
        fields["message"] = message[:300]
    JobRun.objects.filter(pk=job.pk).update(**fields)
    for name, value in fields.items():
        setattr(job, name, value)


def requeue(job_id: int) -> JobRun:
    """Put a failed or interrupted job back in the queue; resumable jobs skip work already done."""
    from mlworkers.tasks import run_job_task

    JobRun.objects.filter(pk=job_id).exclude(status=JobRun.SUCCEEDED).update(status=JobRun.QUEUED, error="")
    job = JobRun.objects.get(pk=job_id)
    _, queue = job_function(job.kind)
    transaction.on_commit(lambda: run_job_task.apply_async(args=[job.pk], queue=queue))
    return job


def _load_job_modules() -> None:
    # Job functions live in the apps' `jobs` modules; importing them fills the registry.
    from importlib import import_module

    for module in (
        "annotation.jobs",
        "annotation.export.jobs",
        "labeling.jobs",
        "mlworkers.pipeline",
        "mlworkers.bulk",
    ):
        try:
            import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
