"""python manage.py annotate_corpus --model-version ID [--dialogue ID ...] [--chunk-size N] [--no-wait]

Queues the resumable `bulk_annotate` job for a worker on the `ml` queue and follows its progress
(or returns at once with --no-wait). Running it again after an interruption labels only the turns
still missing.
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import ModelVersion
from jobs.commands import queue_and_follow
from mlworkers.classifier.bulk import DEFAULT_CHUNK_SIZE


class Command(BaseCommand):
    help = "Label every turn of the corpus (or of some dialogues) with a model version, resumably."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--model-version", type=int, required=True, help="id of an annotation.ModelVersion")
        parser.add_argument("--dialogue", type=int, action="append", dest="dialogues", help="only this dialogue id")
        parser.add_argument(
            "--chunk-size",
            type=int,
            default=DEFAULT_CHUNK_SIZE,
            help="turns per chunk (one transaction and one progress report each)",
        )
        parser.add_argument("--batch-size", type=int, default=64, help="inputs per forward pass of the model")
        parser.add_argument("--no-wait", action="store_true", help="queue the job and return")

    def handle(self, *args, **options) -> None:
        version = ModelVersion.objects.filter(pk=options["model_version"]).first()
        if version is None:
            raise CommandError(f"no model version with id {options['model_version']}")
        parameters = {
            "model_version_id": version.pk,
            "chunk_size": options["chunk_size"],
            "batch_size": options["batch_size"],
            "dialogue_ids": options["dialogues"],
        }
        self.stdout.write(f"bulk annotation with model version {version.pk} ({version.name})")
        job = queue_and_follow("bulk_annotate", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            self.stdout.write(self.style.SUCCESS(f"done: {job.result}"))
