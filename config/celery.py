"""The Celery app. Its broker is CELERY_BROKER_URL (Redis), else the embedded filesystem broker
(see settings); every job runs in a worker started by `python manage.py run_worker`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("dialogue_curation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
