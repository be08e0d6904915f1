"""What the commands that start a job share: queue it, then follow it or return at once."""

from typing import Any

from django.core.management.base import CommandError

from jobs import registry
from jobs.follow import follow
from jobs.models import JobRun
from jobs.runtime import start_job


def queue_and_follow(kind: str, parameters: dict[str, Any], stdout, *, wait: bool = True) -> JobRun:
    """Queue `kind` for a worker; with `wait`, print its progress until it finishes. A bad parameter
    or a failed job is a CommandError naming it."""
    try:
        job = start_job(kind, parameters)
    except registry.InvalidParameters as error:
        raise CommandError(str(error)) from None
    stdout.write(f"queued {kind} as job {job.pk}")
    if not wait:
        stdout.write(f"not waiting: follow it on /jobs/{job.pk}/ or with `manage.py job show {job.pk}`")
        return job
    job = follow(job.pk, stdout.write)
    if job.status != JobRun.SUCCEEDED:
        raise CommandError(f"job {job.pk} {job.status}: {job.error or job.message}")
    return job
