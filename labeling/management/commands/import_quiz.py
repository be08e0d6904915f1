from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from labeling.crowd.quiz_bank import QuizFileError
from labeling.services.importers.quiz import import_quiz_file, import_unanimous


class Command(BaseCommand):
    help = (
        "Add whole corpus dialogues to the secret quiz pool: from a CSV with columns dialogue,label "
        "(a Dialogue id and the known label of its last turn; optional: explanation), or with "
        "--unanimous-from CAMPAIGN_ID the dialogues whose crowd answers were unanimous."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, nargs="?", help="a CSV with the columns dialogue,label[,explanation]")
        parser.add_argument(
            "--unanimous-from",
            type=int,
            metavar="CAMPAIGN_ID",
            help="instead of a file: the campaign's dialogues whose three or more answers were unanimous",
        )

    def handle(self, *args, file: Path | None, unanimous_from: int | None, **options):
        if (file is None) == (unanimous_from is None):
            raise CommandError("give either a FILE or --unanimous-from CAMPAIGN_ID")
        try:
            questions = import_quiz_file(file) if file else import_unanimous(unanimous_from)
        except QuizFileError as error:
            raise CommandError(str(error))
        self.stdout.write(f"{len(questions)} quiz dialogue(s) in the pool from {file or f'campaign {unanimous_from}'}")
