"""Follow a queued job from a command line: a progress bar line whenever its state changes."""

import time
from collections.abc import Callable

from jobs.models import JobRun

BAR_WIDTH = 30
WORKER_HINT_AFTER_S = 10.0


def progress_line(job: JobRun) -> str:
    filled = BAR_WIDTH * job.percent // 100
    counts = f" {job.progress_done}/{job.progress_total}" if job.progress_total else ""
    message = f"  {job.message}" if job.message else ""
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {job.percent:3d}%{counts} {job.status}{message}"


def follow(job_id: int, write: Callable[[str], None], *, interval: float = 1.0) -> JobRun:
    """Print the job's progress until it finishes; returns the finished JobRun."""
    last, started, hinted = None, time.monotonic(), False
    while True:
        job = JobRun.objects.get(pk=job_id)
        state = (job.status, job.progress_done, job.progress_total, job.message)
        if state != last:
            write(progress_line(job))
            last = state
        if job.is_finished:
            return job
        if job.status == JobRun.QUEUED and not hinted and time.monotonic() - started > WORKER_HINT_AFTER_S:
            write("  still queued: is a worker running? (python manage.py run_worker)")
            hinted = True
        time.sleep(interval)
