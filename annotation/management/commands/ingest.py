"""`manage.py ingest PATH...`: import SubRip and OPUS XML subtitle files into the corpus."""

import json

from django.core.management import BaseCommand, CommandError

from annotation.ingest.cleaning import RULE_NAMES
from annotation.ingestion import FAILED, FileOutcome, IngestOptions, ingest_paths


class Command(BaseCommand):
    help = "Ingest subtitle files (.srt, .xml, .xml.gz; folders are searched recursively), one transaction per file."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "paths", nargs="+", metavar="PATH", help=".srt, .xml or .xml.gz files, or folders (searched recursively)"
        )
        parser.add_argument("--genre", action="append", default=[], help="genre(s), comma-separated or repeated")
        parser.add_argument(
            "--language",
            default="en",
            help="ISO 639-1 code of the film; breaks ties between legacy code pages (each dialogue's language is identified)",
        )
        parser.add_argument("--gap", type=float, default=None, help="seconds of silence that split dialogues")
        parser.add_argument(
            "--year", type=int, default=None, help="the film's year (else from the OPUS metadata or the path)"
        )
        parser.add_argument(
            "--imdb-id", default="", help="the film's IMDb id, e.g. tt1234567 (else from the metadata or the path)"
        )
        parser.add_argument("--title", default="", help="the film's title (else from the metadata or the file name)")
        parser.add_argument(
            "--disable-rule", action="append", default=[], choices=RULE_NAMES, help="switch a cleaning rule off"
        )
        parser.add_argument(
            "--segmenter", default="punctuation", help="turn segmenter: 'punctuation' or 'svm:MODEL' (train_segmenter)"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object with the counts")

    def handle(self, *args, **options) -> None:
        if options["gap"] is not None and options["gap"] <= 0:
            raise CommandError("--gap must be positive")
        ingest_options = IngestOptions(
            genres=[g.strip() for value in options["genre"] for g in value.split(",") if g.strip()],
            language=options["language"],
            gap_seconds=options["gap"],
            year=options["year"],
            imdb_id=options["imdb_id"],
            title=options["title"],
            disabled_rules=options["disable_rule"],
            segmenter=options["segmenter"],
        )
        try:
            ingest_options.turn_segmenter()  # a bad model fails now, before any file
        except ValueError as exc:  # ModelError is one
            raise CommandError(str(exc)) from None
        quiet = options["json"]
        try:
            report = ingest_paths(options["paths"], ingest_options, on_file=None if quiet else self._say)
        except FileNotFoundError as exc:
            raise CommandError(str(exc))
        for error in report.errors:
            self.stderr.write(f"error: {error}")
        for warning in report.warnings:
            self.stderr.write(f"warning: {warning}")
        if quiet:
            self.stdout.write(json.dumps(report.as_json()))
        else:
            self._summary(report)
        if report.failed_files:
            raise CommandError(f"{report.failed_files} file(s) could not be ingested")

    def _say(self, outcome: FileOutcome) -> None:
        if outcome.status == FAILED:
            return  # reported once, on stderr, at the end
        if outcome.status != "imported":
            self.stdout.write(f"{outcome.status}: {outcome.path} ({outcome.reason})")
            return
        languages = ", ".join(f"{code} {n}" for code, n in outcome.languages.most_common()) or "none"
        rules = ", ".join(f"{name} {n}" for name, n in sorted(outcome.removed_by_rule.items())) or "none"
        self.stdout.write(
            f"{outcome.status}: {outcome.path} ({outcome.dialogues} dialogues)\n"
            f"  encoding {outcome.encoding}: {outcome.encoding_reason}\n"
            f"  languages: {languages}\n  cleaning rules: {rules}"
        )

    def _summary(self, report) -> None:
        data = report.as_json()
        removed = ", ".join(f"{name} {count}" for name, count in data["removed_by_rule"].items()) or "none"
        self.stdout.write(
            f"{data['files']} file(s) imported, {data['skipped_files']} skipped, {data['failed_files']} failed; "
            f"{data['sentences']} sentences, {data['turns']} turns, {data['dialogues']} dialogues, "
            f"{data['duplicates_dropped']} duplicate dialogues dropped; removed: {removed}"
        )
