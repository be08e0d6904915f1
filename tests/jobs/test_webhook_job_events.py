"""A job's end is one job.succeeded or job.failed event per ending, recorded by jobs.runtime."""

from unittest import mock

import pytest

from jobs import registry
from jobs.models import JobRun
from jobs.runtime import retry_job, run_job, start_job
from jobs.tasks import deliver_webhook_task
from jobs.webhooks.endpoints import create_endpoint
from jobs.webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


@registry.register("test_webhook_succeeds")
def succeeds(job):
    return {"done": 1}


@registry.register("test_webhook_fails")
def fails(job):
    raise ValueError("no model yet\nsecond line")


@pytest.fixture
def queued():
    with mock.patch.object(deliver_webhook_task, "apply_async") as apply_async:
        yield apply_async


def start(kind: str) -> JobRun:
    with mock.patch("jobs.runtime._queue"):
        return start_job(kind)


def test_a_finished_and_a_failed_job_each_announce_their_end_once(queued, django_capture_on_commit_callbacks):
    create_endpoint("http://127.0.0.1:9/hook", ["job.succeeded", "job.failed"])
    good, bad = start("test_webhook_succeeds"), start("test_webhook_fails")
    with django_capture_on_commit_callbacks(execute=True):
        run_job(good.pk, heartbeat=False)
        with pytest.raises(ValueError):
            run_job(bad.pk, heartbeat=False)
        run_job(good.pk, heartbeat=False)  # a redelivered message: not queued, nothing runs
    succeeded = WebhookEvent.objects.get(kind="job.succeeded")
    failed = WebhookEvent.objects.get(kind="job.failed")
    assert succeeded.data["job"] == good.pk and succeeded.data["job_kind"] == "test_webhook_succeeds"
    assert failed.data["error"] == "ValueError: no model yet" and failed.data["status"] == "failed"
    assert WebhookEvent.objects.count() == 2 and queued.call_count == 2


def test_a_retried_job_that_fails_again_is_a_second_occurrence(queued, django_capture_on_commit_callbacks, clock):
    create_endpoint("http://127.0.0.1:9/hook", ["job.failed"])
    job = start("test_webhook_fails")
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ValueError):
        run_job(job.pk, heartbeat=False)
    clock.advance(5)
    with mock.patch("jobs.runtime._queue"):
        assert retry_job(job)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ValueError):
        run_job(job.pk, heartbeat=False)
    assert WebhookEvent.objects.filter(kind="job.failed").count() == 2


def test_a_job_whose_worker_was_lost_too_often_announces_its_failure(
    settings, django_capture_on_commit_callbacks, queued
):
    from datetime import timedelta

    from django.utils import timezone

    from jobs.runtime import requeue_stale_jobs

    create_endpoint("http://127.0.0.1:9/hook", ["job.failed"])
    settings.JOB_MAX_ATTEMPTS = 1
    silent = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 10)
    job = JobRun.objects.create(kind="test_webhook_succeeds", status=JobRun.RUNNING, attempts=1, heartbeat_at=silent)
    with django_capture_on_commit_callbacks(execute=True):
        assert requeue_stale_jobs()["failed"] == [job.pk]
    event = WebhookEvent.objects.get()
    assert event.kind == "job.failed" and "worker lost" in event.data["error"]
