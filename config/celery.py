"""The Celery app. Its broker is CELERY_BROKER_URL (Redis), else the embedded filesystem broker
(see settings); every job runs in a worker started by `python manage.py run_worker`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("dialogue_curation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def schedule_periodic_jobs(sender, **kwargs) -> None:
    """Celery beat (`python -m config.beat`, which reads .env first, or `celery -A config beat`) queues
    these; the jobs themselves run in workers.
    labeling.platform_sync every PLATFORM_SYNC_MINUTES, labeling.free_lapsed_seats every
    PLATFORM_SEAT_SWEEP_MINUTES (0: off; a claim sweeps first either way); the due webhook
    deliveries every WEBHOOK_SWEEP_SECONDS."""
    from django.conf import settings

    sweep = getattr(settings, "PLATFORM_SEAT_SWEEP_MINUTES", 0)
    if sweep:
        sender.add_periodic_task(
            sweep * 60.0,
            sender.signature("jobs.start_scheduled", args=("labeling.free_lapsed_seats", {})),
            name="free lapsed seats",
        )

    sender.add_periodic_task(
        float(getattr(settings, "WEBHOOK_SWEEP_SECONDS", 10)),
        sender.signature("jobs.send_due_webhooks", queue="default"),
        name="send due webhooks",
    )

    minutes = getattr(settings, "PLATFORM_SYNC_MINUTES", 0)
    if minutes:
        sender.add_periodic_task(
            minutes * 60.0,
            sender.signature("jobs.start_scheduled", args=("labeling.platform_sync", {})),
            name="platform sync",
        )
