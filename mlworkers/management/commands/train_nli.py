"""python manage.py train_nli [FILE] [--epochs N] [--name NAME] [--no-wait]

Queues `nli_train`: the BotsTalk moderator's small NLI from a JSONL file of {premise, hypothesis,
label} (labels include "contradiction"; default the example pairs), a ModelVersion of kind nli.
"""

from django.core.management.base import BaseCommand

from jobs.commands import queue_and_follow


class Command(BaseCommand):
    help = "Train the BotsTalk moderator's NLI (contradiction) classifier from labeled pairs."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", nargs="?", help="JSONL of {premise, hypothesis, label}")
        parser.add_argument("--model-name", help="encoder; default ENCODER_MODEL")
        parser.add_argument("--epochs", type=int, help="training epochs (default: the trainer's)")
        parser.add_argument("--name", default="", help="the model version's name (default: generated)")
        parser.add_argument(
            "--no-wait", action="store_true", help="queue the job and return at once instead of following it"
        )

    def handle(self, *args, **options) -> None:
        parameters = {
            "data_path": options["file"],
            "model_name": options["model_name"],
            "epochs": options["epochs"],
            "name": options["name"],
        }
        job = queue_and_follow("nli_train", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            self.stdout.write(self.style.SUCCESS(f"done: {job.result}"))
