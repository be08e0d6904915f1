"""python manage.py push_dataset REPO_ID [--folder PATH | --kind gold --layout turn] [--private]"""

import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.analysis.records import KINDS
from annotation.export.dialogues import LAYOUTS, TURN
from annotation.export.hub import HubError, push_folder
from annotation.export.query import ExportError, ExportFilters, export_to_path


class Command(BaseCommand):
    help = (
        "Upload a Hugging Face datasets folder and its card (README.md) to the Hub (settings.HUB_ENDPOINT, "
        "settings.HUB_TOKEN): an existing folder, or a fresh export of --kind."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("repo_id", help="the dataset repository, OWNER/NAME (created when missing)")
        parser.add_argument("--folder", help="an exported hf folder (default: export --kind now)")
        parser.add_argument("--kind", choices=KINDS, default="gold", help="what to export when no --folder")
        parser.add_argument("--layout", choices=LAYOUTS, default=TURN, help="turn or dialogue (when no --folder)")
        parser.add_argument("--private", action="store_true", help="create the repository private")
        parser.add_argument("--message", default="", help="the commit message")

    def handle(self, *args, **options) -> None:
        if options["folder"]:
            self._push(Path(options["folder"]), options)
            return
        with tempfile.TemporaryDirectory(prefix="push-dataset-") as scratch:
            folder = Path(scratch) / "hf"
            try:
                summary = export_to_path(options["kind"], "hf", folder, ExportFilters(), layout=options["layout"])
            except ExportError as error:
                raise CommandError(str(error)) from None
            self.stdout.write(f"Exported {summary.rows} {options['kind']} rows with their card.")
            self._push(folder, options)

    def _push(self, folder: Path, options: dict) -> None:
        if not folder.is_dir():
            raise CommandError(f"--folder: {folder} is not a folder")
        try:
            pushed = push_folder(
                folder,
                options["repo_id"],
                endpoint=settings.HUB_ENDPOINT,
                token=settings.HUB_TOKEN,
                private=options["private"],
                message=options["message"],
            )
        except HubError as error:
            raise CommandError(f"push to {settings.HUB_ENDPOINT} failed: {error}") from None
        self.stdout.write(f"Pushed {pushed.files} files to {pushed.repo_url} ({pushed.commit_url}).")
