"""Test helper, run as a worker process: `python -m tests.jobs.slow_worker`. Every chunk of
bulk_annotate and weak_apply first sleeps TEST_SLOW_CHUNK_SECONDS, so a test can kill -9 the
worker in the middle of a job. Otherwise it is `manage.py run_worker --pool solo`."""

import os
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.core.management import call_command  # noqa: E402

import mlworkers.classifier.bulk  # noqa: E402
import mlworkers.classifier.weak_labeler  # noqa: E402

DELAY = float(os.environ.get("TEST_SLOW_CHUNK_SECONDS", "0"))


class SlowLabeler:
    def __init__(self, labeler):
        self.labeler = labeler

    def predict_proba(self, *args, **kwargs):
        time.sleep(DELAY)
        return self.labeler.predict_proba(*args, **kwargs)


def slow_down() -> None:
    real_predict, real_loader = (
        mlworkers.classifier.bulk._score_chunk,
        mlworkers.classifier.weak_labeler.load_weak_labeler_for,
    )

    def slow_predict(*args, **kwargs):
        time.sleep(DELAY)
        return real_predict(*args, **kwargs)

    mlworkers.classifier.bulk._score_chunk = slow_predict
    mlworkers.classifier.weak_labeler.load_weak_labeler_for = lambda version: SlowLabeler(real_loader(version))


if __name__ == "__main__":
    if DELAY:
        slow_down()
    call_command("run_worker", "--pool", "solo", "--loglevel", "INFO")
