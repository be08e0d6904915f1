"""The job runtime in one process: claim once, fail with a one-line reason, cancel within one chunk,
retry, and recover a job whose worker stopped beating (requeue up to the limit, then fail)."""

import contextlib
from datetime import timedelta
from unittest import mock

import pytest
from django.db import OperationalError
from django.utils import timezone

from jobs import registry
from jobs.models import JobRun
from jobs.runtime import (
    Heartbeat,
    JobStopped,
    cancel_job,
    report_progress,
    republish_queued_jobs,
    requeue_stale_jobs,
    retry_job,
    run_job,
    start_job,
)
from jobs.tasks import run_job_task

pytestmark = pytest.mark.django_db


def running(minutes_silent: float, attempts: int = 1, kind: str = "gold_split") -> JobRun:
    beat = timezone.now() - timedelta(minutes=minutes_silent)
    return JobRun.objects.create(
        kind=kind, status=JobRun.RUNNING, attempts=attempts, heartbeat_at=beat, started_at=beat
    )


def test_a_job_is_claimed_once_and_counts_its_attempt():
    job = JobRun.objects.create(kind="gold_split", parameters={})
    assert "assigned" in run_job(job.pk, heartbeat=False)
    assert run_job(job.pk, heartbeat=False) == {"job": job.pk, "skipped": "not queued"}
    job.refresh_from_db()
    assert (job.status, job.attempts) == (JobRun.SUCCEEDED, 1) and job.heartbeat_at is not None


def test_a_job_that_cannot_run_fails_with_a_one_line_reason_not_a_zero_score():
    job = JobRun.objects.create(kind="bulk_annotate", parameters={})
    run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    assert job.status == JobRun.FAILED and job.result == {}
    assert job.error == "no dialogue classifier yet: run self_label_rounds first"


def test_start_job_validates_with_the_schema_and_records_nothing_when_bad():
    with pytest.raises(registry.InvalidParameters) as raised:
        start_job("gold_split", {"test_fraction": -5, "colour": "red"})
    assert set(raised.value.errors) == {"test_fraction", "colour"}
    assert raised.value.errors["colour"] == ["is not a parameter of this job"]
    assert not JobRun.objects.exists()
    with pytest.raises(registry.UnknownJob, match="no job named 'nope'"):
        start_job("nope")


def test_cancel_stops_a_running_job_at_its_next_progress_report():
    job = running(0)
    report_progress(job, 1, 10)
    assert cancel_job(job, by="researcher")
    with pytest.raises(JobStopped):
        report_progress(job, 2, 10)
    job.refresh_from_db()
    assert (job.status, job.progress_done, job.message) == (JobRun.CANCELLED, 1, "cancelled by researcher")
    assert not cancel_job(job)  # finished already


def test_a_queued_job_cancelled_before_a_worker_takes_it_never_runs():
    job = JobRun.objects.create(kind="gold_split")
    cancel_job(job)
    assert run_job(job.pk, heartbeat=False)["skipped"] == "not queued"
    job.refresh_from_db()
    assert job.status == JobRun.CANCELLED and job.started_at is None


def test_retry_queues_a_failed_job_again_with_fresh_attempts(django_capture_on_commit_callbacks):
    job = JobRun.objects.create(kind="gold_split", status=JobRun.FAILED, attempts=3, error="boom")
    with mock.patch.object(run_job_task, "apply_async") as queued, django_capture_on_commit_callbacks(execute=True):
        assert retry_job(job)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.error) == (JobRun.QUEUED, 0, "")
    queued.assert_called_once_with(args=[job.pk], queue="default")
    assert not retry_job(job)  # a queued job is not retried


def test_a_silent_running_job_is_requeued_and_a_live_one_is_left_alone(settings, django_capture_on_commit_callbacks):
    settings.JOB_STALE_SECONDS, settings.JOB_MAX_ATTEMPTS = 120, 3
    stale, live = running(minutes_silent=3), running(minutes_silent=1)
    with mock.patch.object(run_job_task, "apply_async") as queued, django_capture_on_commit_callbacks(execute=True):
        assert requeue_stale_jobs() == {"requeued": [stale.pk], "failed": []}
    stale.refresh_from_db()
    live.refresh_from_db()
    assert stale.status == JobRun.QUEUED and "worker lost" in stale.message and "attempt 2 of 3" in stale.message
    assert live.status == JobRun.RUNNING
    queued.assert_called_once_with(args=[stale.pk], queue="default")


def test_a_job_that_lost_its_worker_too_often_fails_with_the_reason(settings):
    settings.JOB_STALE_SECONDS, settings.JOB_MAX_ATTEMPTS = 120, 3
    job = running(minutes_silent=5, attempts=3)
    assert requeue_stale_jobs() == {"requeued": [], "failed": [job.pk]}
    job.refresh_from_db()
    assert (
        job.status == JobRun.FAILED and "worker lost 3 times" in job.error and "gave up after 3 attempts" in job.error
    )


def test_a_requeued_job_that_comes_back_to_life_stops_instead_of_running_twice(settings):
    settings.JOB_STALE_SECONDS = 120
    job = running(minutes_silent=3)
    requeue_stale_jobs()
    JobRun.objects.filter(pk=job.pk).update(status=JobRun.RUNNING, attempts=2)  # another worker took it
    with pytest.raises(JobStopped):
        report_progress(job, 5, 10)  # the old attempt (attempts=1) notices at its next chunk


def test_the_heartbeat_refreshes_a_running_job():
    job = running(minutes_silent=10)
    Heartbeat(job.pk, job.attempts, every=60).beat()
    job.refresh_from_db()
    assert timezone.now() - job.heartbeat_at < timedelta(seconds=5)


def test_a_worker_on_the_embedded_broker_requeues_every_queued_job_at_start(django_capture_on_commit_callbacks):
    waiting = [JobRun.objects.create(kind="gold_split"), JobRun.objects.create(kind="weak_apply")]
    JobRun.objects.create(kind="gold_split", status=JobRun.RUNNING)
    with mock.patch.object(run_job_task, "apply_async") as queued, django_capture_on_commit_callbacks(execute=True):
        assert republish_queued_jobs() == [job.pk for job in waiting]
    assert [c.kwargs for c in queued.call_args_list] == [
        {"args": [waiting[0].pk], "queue": "default"}, {"args": [waiting[1].pk], "queue": "ml"},
    ]  # fmt: skip


DATABASE_ERRORS: list[str] = []  # what test_flaky_database raises, one per attempt, then it succeeds


@registry.register("test_flaky_database")
def flaky_database(job):
    if DATABASE_ERRORS:
        raise OperationalError(DATABASE_ERRORS.pop(0))
    return {"attempt": job.attempts}


def test_a_job_that_loses_the_database_is_queued_again_and_then_succeeds():
    """A database restart under a running job (OperationalError) is not the job's fault: it is queued
    again (eager here, so the next attempt runs at once) and finishes."""
    DATABASE_ERRORS[:] = ["terminating connection due to administrator command"]
    job = JobRun.objects.create(kind="test_flaky_database", parameters={})
    run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.error, job.result) == (JobRun.SUCCEEDED, 2, "", {"attempt": 2})


def test_a_job_that_keeps_losing_the_database_fails_after_its_attempts():
    DATABASE_ERRORS[:] = ["the database system is starting up"] * 5
    job = JobRun.objects.create(kind="test_flaky_database", parameters={})
    with contextlib.suppress(OperationalError):  # the last attempt's error (eager: may stay inside)
        run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    assert (job.status, job.attempts) == (JobRun.FAILED, 3) and "starting up" in job.error
    DATABASE_ERRORS.clear()


def test_a_job_running_another_in_its_process_hears_of_its_progress_once_and_never_of_its_own():
    """The demo's build runs each step as a child job in its own process; the relay moves the
    build's progress within the step instead of leaving it still for the step's length."""
    from jobs.runtime import relaying_progress

    parent = running(0, kind="demo_build")
    child = running(0, kind="bulk_annotate")
    heard = []

    def relay(job: JobRun) -> None:
        heard.append((job.pk, job.progress_done, job.progress_total))
        report_progress(parent, 50 + job.progress_done, 100, f"step: {job.message}")  # no relay in a relay

    with relaying_progress(relay):
        report_progress(child, 3, 10, "labeled 3 of 10 turns")
        report_progress(child, 7, 10, "labeled 7 of 10 turns")
    report_progress(child, 10, 10, "labeled 10 of 10 turns")  # outside: nobody hears of it
    assert heard == [(child.pk, 3, 10), (child.pk, 7, 10)]
    parent.refresh_from_db()
    assert (parent.progress_done, parent.progress_total, parent.message) == (57, 100, "step: labeled 7 of 10 turns")
