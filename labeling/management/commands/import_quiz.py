from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from labeling.importers.quiz import import_quiz_file
from labeling.quiz_bank import QuizFileError


class Command(BaseCommand):
    help = "Add quiz questions from a CSV with columns text,label (optional: explanation)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        try:
            questions = import_quiz_file(file)
        except QuizFileError as error:
            raise CommandError(str(error))
        self.stdout.write(f"imported {len(questions)} quiz question(s) from {file}")
