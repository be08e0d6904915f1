from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class JobsConfig(AppConfig):
    name = "jobs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Each app declares its jobs in its own `jobs.py`; importing them fills the registry,
        # the way the admin finds `admin.py` modules.
        from django.utils.module_loading import autodiscover_modules

        from jobs import (
            tasks,  # noqa: F401  (the Celery tasks: queued by name, known to every process)
            worker,  # noqa: F401  (connects the worker's stale-job sweeper)
        )

        autodiscover_modules("jobs")
        make_embedded_broker_folders()


def make_embedded_broker_folders() -> None:
    """The filesystem broker's folders must exist before the first job is queued or a worker polls."""
    if not str(settings.CELERY_BROKER_URL).startswith("filesystem://"):
        return
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)
