"""The Celery tasks of the jobs app: the one task of every JobRun (a JobRun id in, the job's small
result dict out; the work is in jobs.runtime), Celery beat's entries and the webhook deliveries'.
The modules that queue them name them (runtime.RUN_JOB, delivery.DELIVER_WEBHOOK) rather than
import them; jobs.apps imports this module as Django starts, so every process knows them."""

from celery import shared_task

from jobs import runtime
from jobs.webhooks import delivery


# acks_late: a message is acknowledged only once its job has finished, so a broker redelivers the
# job of a killed worker. That is safe because the claim in run_job is conditional and every job's
# work is chunked and idempotent.
@shared_task(name=runtime.RUN_JOB, acks_late=True, ignore_result=True)
def run_job_task(job_id: int) -> dict:
    return runtime.run_job(job_id, heartbeat=not run_job_task.request.is_eager)


@shared_task(name="jobs.start_scheduled", ignore_result=True)
def start_scheduled_task(kind: str, parameters: dict | None = None) -> int | None:
    """Celery beat's entry (config.celery): queue a job of `kind` unless one with the same
    parameters is still queued or running, so a slow run never piles up copies of itself."""
    return runtime.start_scheduled(kind, parameters or {})


# Webhook deliveries are Celery tasks of their own, not JobRuns: a JobRun's end is itself an
# event (job.succeeded / job.failed), and one per delivery would announce itself without end.
@shared_task(name=delivery.DELIVER_WEBHOOK, acks_late=True, ignore_result=True)
def deliver_webhook_task(delivery_id: int) -> dict:
    """One attempt of one webhook delivery (jobs.webhooks.delivery.send); its claim is
    conditional, so a redelivered message or a second worker makes no second attempt."""
    return delivery.send(delivery_id)


@shared_task(name="jobs.send_due_webhooks", ignore_result=True)
def send_due_webhooks_task() -> dict:
    """Celery beat's sweep, every WEBHOOK_SWEEP_SECONDS: queue each webhook delivery that is due."""
    return delivery.send_due()
