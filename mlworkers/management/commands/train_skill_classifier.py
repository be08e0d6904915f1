"""python manage.py train_skill_classifier [FILE ...] [--epochs N] [--name NAME] [--no-wait]

Queues `skill_train`: a skill classifier over every skill the JSONL files of {text, skill} name
(a BotsTalk pool file is one; default the example pool), recorded as a ModelVersion of kind skill.
"""

from django.core.management.base import BaseCommand

from jobs.commands import queue_and_follow


class Command(BaseCommand):
    help = "Train a skill classifier from utterances labeled with a skill."

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="*", help="JSONL files of {text, skill}")
        parser.add_argument("--model-name", help="encoder; default ENCODER_MODEL")
        parser.add_argument("--epochs", type=int, help="training epochs (default: the trainer's)")
        parser.add_argument("--name", default="", help="the model version's name (default: generated)")
        parser.add_argument(
            "--no-wait", action="store_true", help="queue the job and return at once instead of following it"
        )

    def handle(self, *args, **options) -> None:
        parameters = {
            "data_path": ",".join(options["files"]) or None,
            "model_name": options["model_name"],
            "epochs": options["epochs"],
            "name": options["name"],
        }
        job = queue_and_follow("skill_train", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            self.stdout.write(self.style.SUCCESS(f"done: {job.result}"))
