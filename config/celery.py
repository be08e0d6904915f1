"""The Celery app. With no CELERY_BROKER_URL, settings make every task run in-process (eager)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("dialogue_curation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
