"""The one Celery task of every JobRun: a JobRun id in, the job's small result dict out (the work is in jobs.runtime)."""

from celery import shared_task

from jobs import runtime


# acks_late: a message is acknowledged only once its job has finished, so a broker redelivers the
# job of a killed worker. That is safe because the claim in run_job is conditional and every job's
# work is chunked and idempotent.
@shared_task(name="jobs.run_job", acks_late=True, ignore_result=True)
def run_job_task(job_id: int) -> dict:
    return runtime.run_job(job_id, heartbeat=not run_job_task.request.is_eager)


@shared_task(name="jobs.start_scheduled", ignore_result=True)
def start_scheduled_task(kind: str, parameters: dict | None = None) -> int | None:
    """Celery beat's entry (config.celery): queue a job of `kind` unless one with the same
    parameters is still queued or running, so a slow run never piles up copies of itself."""
    return runtime.start_scheduled(kind, parameters or {})
