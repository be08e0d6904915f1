"""Sharded jobs: a job splits its work into shard jobs queued as one Celery group; the parent's
progress is their sum, the last shard settles it, and cancel, retry and recovery see the shards."""

from datetime import timedelta

import pytest
from django.utils import timezone
from pydantic import Field

from jobs.models import JobRun
from jobs.registry import JobParameters, register
from jobs.runtime import (
    cancel_job,
    combine_results,
    report_progress,
    requeue_stale_jobs,
    retry_job,
    run_in_shards,
    start_job,
)

pytestmark = pytest.mark.django_db

FAIL_PARTS: set[int] = set()
RUNS: list[int] = []


class SumParameters(JobParameters):
    numbers: list[int] = Field(min_length=1)
    shards: int = Field(1, ge=1)
    part: int | None = None


@register("test_sharded_sum", parameters=SumParameters)
def sharded_sum(job, numbers, shards=1, part=None):
    if part is None and shards > 1:
        size = -(-len(numbers) // shards)
        pieces = [numbers[i : i + size] for i in range(0, len(numbers), size)]
        return run_in_shards(job, [{"numbers": piece, "part": index} for index, piece in enumerate(pieces)])
    RUNS.append(part)
    if part in FAIL_PARTS:
        raise RuntimeError(f"part {part} broke")
    report_progress(job, len(numbers), len(numbers), f"part {part}")
    return {"total": sum(numbers), "count": len(numbers), "seconds": 1.5, "rate_per_s": 10.0, "label": "sum"}


@pytest.fixture(autouse=True)
def no_failures():
    FAIL_PARTS.clear()
    RUNS.clear()
    yield
    FAIL_PARTS.clear()


def start(numbers, shards, capture):
    with capture(execute=True):
        job = start_job("test_sharded_sum", {"numbers": numbers, "shards": shards})
    job.refresh_from_db()
    return job


def test_the_shards_run_as_jobs_and_the_parent_sums_them(django_capture_on_commit_callbacks):
    job = start(list(range(1, 11)), 3, django_capture_on_commit_callbacks)
    shards = list(job.shards.order_by("pk"))
    assert len(shards) == 3 and all(shard.status == JobRun.SUCCEEDED for shard in shards)
    assert [shard.parameters["numbers"] for shard in shards] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]
    assert job.status == JobRun.SUCCEEDED and job.finished_at is not None
    assert job.result == {"total": 55, "count": 10, "seconds": 4.5, "label": "sum", "shards": 3}
    assert (job.progress_done, job.progress_total) == (10, 10)


def test_a_failed_shard_fails_the_parent_by_name_and_a_retry_reruns_only_that_shard(
    django_capture_on_commit_callbacks,
):
    from config.celery import app

    app.conf.task_eager_propagates = False  # as a worker: the other shards go on (conftest restores it)
    FAIL_PARTS.add(1)
    job = start(list(range(1, 11)), 3, django_capture_on_commit_callbacks)
    broken = job.shards.get(parameters__part=1)
    assert (
        job.status == JobRun.FAILED and job.error == f"1 of 3 shards failed (#{broken.pk}: RuntimeError: part 1 broke)"
    )
    FAIL_PARTS.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert retry_job(job)
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED and job.result["total"] == 55
    assert job.shards.count() == 3  # nothing created twice
    assert RUNS == [0, 1, 2, 1]  # only the failed shard ran again


def test_cancelling_the_parent_cancels_its_unfinished_shards():
    parent = JobRun.objects.create(kind="test_sharded_sum", status=JobRun.RUNNING, attempts=1)
    done = JobRun.objects.create(kind="test_sharded_sum", parent=parent, status=JobRun.SUCCEEDED)
    waiting = JobRun.objects.create(kind="test_sharded_sum", parent=parent)
    assert cancel_job(parent, by="researcher")
    statuses = dict(JobRun.objects.filter(pk__in=[parent.pk, done.pk, waiting.pk]).values_list("pk", "status"))
    assert statuses == {parent.pk: JobRun.CANCELLED, done.pk: JobRun.SUCCEEDED, waiting.pk: JobRun.CANCELLED}


def test_a_parent_waiting_for_shards_is_not_stale_but_one_whose_shards_are_done_is_recovered():
    long_ago = timezone.now() - timedelta(hours=1)
    parent = JobRun.objects.create(
        kind="test_sharded_sum", status=JobRun.RUNNING, attempts=1, heartbeat_at=long_ago, started_at=long_ago,
        parameters={"numbers": [1, 2], "shards": 2},
    )  # fmt: skip
    shard = JobRun.objects.create(
        kind="test_sharded_sum", parent=parent, status=JobRun.RUNNING, heartbeat_at=timezone.now()
    )
    assert parent.pk not in requeue_stale_jobs()["requeued"]
    JobRun.objects.filter(pk=shard.pk).update(status=JobRun.SUCCEEDED, result={"total": 3, "count": 2})
    assert requeue_stale_jobs()["requeued"] == [parent.pk]  # the shard finished but nobody settled it


def test_a_requeued_parent_whose_shards_all_succeeded_finishes_without_new_shards(django_capture_on_commit_callbacks):
    job = start([4, 5, 6], 3, django_capture_on_commit_callbacks)
    JobRun.objects.filter(pk=job.pk).update(status=JobRun.QUEUED, result={})
    from jobs.runtime import run_job

    run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED and job.result["total"] == 15 and job.shards.count() == 3


def test_results_combine_numbers_and_keep_the_rest():
    combined = combine_results(
        [
            {"n": 2, "s": {"a": 1.0}, "name": "x", "ok": True, "x_per_s": 9, "errors": ["e1"]},
            {"n": 3, "s": {"a": 2.5, "b": 1}, "errors": ["e2", "e3"]},
        ]
    )
    assert combined == {
        "n": 5, "s": {"a": 3.5, "b": 1}, "name": "x", "ok": True, "errors": ["e1", "e2", "e3"], "shards": 2
    }  # fmt: skip
