"""python manage.py import_dataset FILE: import a gold CSV written by export_dataset."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.export.importer import import_gold
from annotation.export.reader import ImportFileError, read_gold_csv


class Command(BaseCommand):
    help = "Import gold (crowd) labels from a CSV: dialogues and turns are matched by content or created."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a gold CSV written by export_dataset")

    def handle(self, *args, **options) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            with open(path, encoding="utf-8-sig", newline="") as handle:
                result = import_gold(read_gold_csv(handle, filename=path.name), filename=path.name)
        except (ImportFileError, UnicodeDecodeError) as exc:
            raise CommandError(str(exc))
        self.stdout.write(
            f"Imported {path.name}: dialogues {result.dialogues_created} created, {result.dialogues_found} found; "
            f"turns {result.turns_created} created; labels {result.labels_created} created, "
            f"{result.labels_updated} updated, {result.labels_unchanged} unchanged."
        )
