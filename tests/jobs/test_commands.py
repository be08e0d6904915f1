"""The command line: `job show|cancel|retry`, `run_worker`'s checks, and commands that queue a job
return at once with --no-wait (the job waits for a worker; nothing runs in the command)."""

from io import StringIO
from unittest import mock

import pytest
from django.core.management import CommandError, call_command

from jobs.follow import progress_line
from jobs.models import JobRun
from jobs.tasks import run_job_task

pytestmark = pytest.mark.django_db


def test_job_cancel_retry_and_show(django_capture_on_commit_callbacks):
    job = JobRun.objects.create(kind="gold_split", status=JobRun.RUNNING, attempts=1, progress_done=1, progress_total=4)
    out = StringIO()
    call_command("job", "cancel", str(job.pk), stdout=out)
    assert "cancelled" in out.getvalue() and JobRun.objects.get(pk=job.pk).status == JobRun.CANCELLED
    with pytest.raises(CommandError, match="has already finished"):
        call_command("job", "cancel", str(job.pk))
    with mock.patch.object(run_job_task, "apply_async") as queued, django_capture_on_commit_callbacks(execute=True):
        call_command("job", "retry", str(job.pk), stdout=StringIO())
    assert JobRun.objects.get(pk=job.pk).status == JobRun.QUEUED and queued.called
    with pytest.raises(CommandError, match="only failed or cancelled jobs can be retried"):
        call_command("job", "retry", str(job.pk))
    with pytest.raises(CommandError, match="no job with id 999"):
        call_command("job", "show", "999")


def test_the_progress_line_is_a_bar_with_counts_status_and_message():
    job = JobRun(kind="weak_apply", status=JobRun.RUNNING, progress_done=50, progress_total=200, message="labeling")
    assert progress_line(job) == "[" + "#" * 7 + "." * 23 + "]  25% 50/200 running  labeling"


@pytest.mark.parametrize(
    ("args", "message"), [(["--queues", "gpu"], "unknown gpu"), (["--concurrency", "0"], "at least 1")]
)
def test_run_worker_refuses_a_bad_queue_or_concurrency(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("run_worker", *args)


def test_run_pipeline_with_no_wait_only_queues_its_job(django_capture_on_commit_callbacks):
    out = StringIO()
    with mock.patch.object(run_job_task, "apply_async") as queued, django_capture_on_commit_callbacks(execute=True):
        call_command("run_pipeline", "--steps", "weak_train", "--no-wait", stdout=out)
    job = JobRun.objects.get()
    assert (job.kind, job.status, job.parameters["steps"]) == ("run_pipeline", JobRun.QUEUED, ["weak_train"])
    queued.assert_called_once_with(args=[job.pk], queue="ml")
    assert f"queued run_pipeline as job {job.pk}" in out.getvalue()


def test_a_bad_parameter_from_the_command_line_names_the_field():
    with pytest.raises(CommandError, match="per_label"):
        call_command("run_pipeline", "--per-label", "0", "--no-wait")
    assert not JobRun.objects.exists()
