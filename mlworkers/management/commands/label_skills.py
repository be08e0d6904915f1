"""python manage.py label_skills [--model-version ID] [--source all|subtitles|botstalk] [--dialogue ID ...] [--no-wait]

Queues `skill_label`: a skill classifier labels every chosen turn with a skill distribution
(TurnSkill, source classifier), resumably; shown on the dialogue pages and Analysis → Skills.
"""

from django.core.management.base import BaseCommand

from jobs.commands import queue_and_follow


class Command(BaseCommand):
    help = "Label the corpus's turns with a skill classifier's skill distribution."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--model-version", type=int, help="skill classifier id; default the newest")
        parser.add_argument(
            "--source", choices=["all", "subtitles", "botstalk"], default="all", help="which dialogues to label"
        )
        parser.add_argument("--dialogue", type=int, action="append", dest="dialogues", help="only this dialogue id")
        parser.add_argument(
            "--chunk-size",
            type=int,
            default=2000,
            help="turns per chunk (one transaction and one progress report each)",
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="queue the job and return at once instead of following it"
        )

    def handle(self, *args, **options) -> None:
        parameters = {
            "skill_model_version_id": options["model_version"],
            "source": options["source"],
            "dialogue_ids": options["dialogues"],
            "chunk_size": options["chunk_size"],
        }
        job = queue_and_follow("skill_label", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            self.stdout.write(self.style.SUCCESS(f"done: {job.result}"))
