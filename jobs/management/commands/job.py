"""python manage.py job show|cancel|retry ID: the Jobs page's buttons on the command line."""

from django.core.management.base import BaseCommand, CommandError

from jobs.follow import progress_line
from jobs.models import JobRun
from jobs.runtime import cancel_job, retry_job


class Command(BaseCommand):
    help = "Show, cancel or retry a job."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "action",
            choices=["show", "cancel", "retry"],
            help="show its state, cancel it, or queue a failed or cancelled job again",
        )
        parser.add_argument("job_id", type=int, help="the JobRun id (on the Jobs page)")

    def handle(self, *args, action: str, job_id: int, **options) -> None:
        job = JobRun.objects.filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"no job with id {job_id}")
        if action == "cancel" and not cancel_job(job, by="command line"):
            raise CommandError(f"job {job_id} is {job.status}: it has already finished")
        if action == "retry" and not retry_job(job):
            raise CommandError(f"job {job_id} is {job.status}: only failed or cancelled jobs can be retried")
        job.refresh_from_db()
        self.stdout.write(f"job {job.pk} {job.kind} (attempts {job.attempts}): {progress_line(job)}")
        if job.error:
            self.stdout.write(f"error: {job.error}")
