"""python manage.py annotate_corpus --model-version ID [--dialogue ID ...] [--chunk-size N]

Starts the resumable `bulk_annotate` job and prints its progress. With no Celery broker the job
runs here, in this process; with a broker a worker on the `ml` queue runs it and this command
follows its progress (or returns at once with --no-wait). Running it again after an interruption
labels only the turns still missing.
"""

import logging
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

import mlworkers.bulk  # importing it registers the bulk_annotate job
from annotation.models import ModelVersion
from mlworkers import jobs
from mlworkers.models import JobRun


class _StdoutHandler(logging.Handler):
    def __init__(self, write) -> None:
        super().__init__(logging.INFO)
        self.write = write

    def emit(self, record: logging.LogRecord) -> None:
        self.write(record.getMessage())


class Command(BaseCommand):
    help = "Label every turn of the corpus (or of some dialogues) with a model version, resumably."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--model-version", type=int, required=True, help="id of an annotation.ModelVersion")
        parser.add_argument("--dialogue", type=int, action="append", dest="dialogues", help="only this dialogue id")
        parser.add_argument("--chunk-size", type=int, default=mlworkers.bulk.DEFAULT_CHUNK_SIZE)
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--no-wait", action="store_true", help="with a broker: queue the job and return")

    def handle(self, *args, **options) -> None:
        version = ModelVersion.objects.filter(pk=options["model_version"]).first()
        if version is None:
            raise CommandError(f"no model version with id {options['model_version']}")
        if options["chunk_size"] < 1:
            raise CommandError("--chunk-size must be at least 1")
        parameters = {
            "model_version_id": version.pk,
            "chunk_size": options["chunk_size"],
            "batch_size": options["batch_size"],
        }
        if options["dialogues"]:
            parameters["dialogue_ids"] = options["dialogues"]
        handler = _StdoutHandler(self.stdout.write)
        bulk_logger = logging.getLogger("mlworkers.bulk")
        bulk_logger.addHandler(handler)
        previous_level = bulk_logger.level
        bulk_logger.setLevel(logging.INFO)
        try:
            job = self._start(parameters)
        finally:
            bulk_logger.removeHandler(handler)
            bulk_logger.setLevel(previous_level)
        self.stdout.write(f"job {job.pk}: bulk annotation with model version {version.pk} ({version.name})")
        if not options["no_wait"]:
            self._follow(job.pk)

    def _start(self, parameters: dict) -> JobRun:
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            return jobs.start_job("bulk_annotate", parameters)
        # No broker: run the recorded job right here, so progress prints as it goes.
        job = JobRun.objects.create(kind="bulk_annotate", parameters=parameters)
        try:
            jobs.run_job(job.pk)
        except Exception as exc:
            raise CommandError(f"job {job.pk} failed: {type(exc).__name__}: {exc}")
        return job

    def _follow(self, job_id: int) -> None:
        last = None
        while True:
            job = JobRun.objects.get(pk=job_id)
            if (job.progress_done, job.status) != last:
                self.stdout.write(f"[{job.status}] {job.progress_done}/{job.progress_total} turns ({job.percent}%)")
                last = (job.progress_done, job.status)
            if job.is_finished:
                break
            time.sleep(2)
        if job.status == JobRun.FAILED:
            raise CommandError(f"job {job.pk} failed: {job.error}")
        self.stdout.write(self.style.SUCCESS(f"done: {job.result}"))
