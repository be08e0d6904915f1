"""python manage.py export_dataset --kind gold|silver|extended --format csv|jsonl|hf --out PATH
[--layout turn|dialogue] [filters]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.analysis.records import KINDS
from annotation.export.dialogues import LAYOUTS, TURN
from annotation.export.query import ExportError, ExportFilters, export_to_path
from annotation.export.rows import SPLITS
from annotation.export.writers import FORMATS


class Command(BaseCommand):
    help = "Export gold, extended or silver labels as CSV, JSONL or a Hugging Face datasets folder (streamed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--kind",
            choices=KINDS,
            required=True,
            help="gold (crowd labels), extended (the labels grown from gold: SBERT and self labels, not the gold itself) or silver (a model's predictions)",
        )
        parser.add_argument(
            "--format",
            choices=FORMATS,
            required=True,
            dest="fmt",
            help="csv, jsonl, or hf (a Hugging Face datasets folder)",
        )
        parser.add_argument("--out", required=True, help="a file for csv/jsonl, a folder for hf")
        parser.add_argument(
            "--layout",
            choices=LAYOUTS,
            default=TURN,
            help="turn: a record per label (default); dialogue: a record per dialogue with all its turns (jsonl, hf)",
        )
        parser.add_argument("--label", help="only this label (case-insensitive)")
        parser.add_argument("--min-confidence", type=float, help="only labels with at least this confidence (0..1)")
        parser.add_argument("--source", help="gold: crowd; extended: sbert or self")
        parser.add_argument("--split", choices=SPLITS, help="only dialogues of this split")
        parser.add_argument("--model-version", type=int, help="silver: the model version id (default: newest)")

    def handle(self, *args, **options) -> None:
        filters = ExportFilters(
            label=options["label"],
            min_confidence=options["min_confidence"],
            source=options["source"],
            split=options["split"],
            model_version=options["model_version"],
        )
        out = Path(options["out"])
        self.verbosity = options["verbosity"]
        try:
            summary = export_to_path(
                options["kind"],
                options["fmt"],
                out,
                filters,
                on_progress=self._progress,
                every=100_000,
                layout=options["layout"],
            )
        except ExportError as exc:
            raise CommandError(str(exc))
        splits = ", ".join(f"{split} {n}" for split, n in sorted(summary.by_split.items())) or "no rows"
        self.stdout.write(f"Wrote {summary.rows} rows of {summary.dialogues} dialogues to {out} ({splits}).")

    def _progress(self, rows: int) -> None:
        if self.verbosity > 1:
            self.stderr.write(f"{rows} rows")
