"""`manage.py extract_pairs PATH... --out FILE`: SubTle interaction-response pairs from SubRip files."""

import os
import tempfile
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from django.core.management import BaseCommand, CommandError

from annotation.ingest.pairs import (
    DEFAULT_MAX_GAP,
    GenreStats,
    PairWriter,
    extract_pairs,
    pair_key,
    read_reference,
    score_pairs,
    stats_table,
)
from annotation.ingest.records import SubtitleFormatError
from annotation.ingest.srt_reader import read_srt_cues
from annotation.ingest.subtitle_paths import FoundFile, NoSubtitleFiles, find_files


@contextmanager
def _replacing(out: Path):
    """A temporary file beside `out` that replaces it on success and vanishes on failure."""
    try:
        fd, name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
    except OSError as exc:
        raise CommandError(f"{out}: cannot write: {exc.strerror or exc}") from None
    try:
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(name, out)
    finally:
        if os.path.exists(name):
            os.unlink(name)


class Command(BaseCommand):
    help = "Write the SubTle interaction-response pairs of SubRip files (folders are searched recursively)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help=".srt files or folders (searched recursively)")
        parser.add_argument("--out", required=True, help="file to write (replaced only once every file is read)")
        parser.add_argument("--max-gap", type=float, default=DEFAULT_MAX_GAP, help="seconds; a pair's gap is under it")
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl", help="the output file's format")
        parser.add_argument("--genre", default="", help="genre of every file (default: the folder's name)")
        parser.add_argument("--language", default="en", help="ISO 639-1 code; guides legacy encoding detection")
        parser.add_argument("--reference", default="", help="expected pairs (JSON lines or CSV): precision/recall")

    def handle(self, *args, **options) -> None:
        if options["max_gap"] <= 0:
            raise CommandError("--max-gap must be positive")
        reference = self._reference(options["reference"])
        try:
            files = find_files(options["paths"], (".srt",), options["genre"].strip())
        except NoSubtitleFiles as exc:
            raise CommandError(str(exc)) from None
        stats, keys, errors = self._write(files, Path(options["out"]), options)
        self.stdout.write(stats_table(stats))
        if reference is not None:
            score = score_pairs(keys, reference)
            self.stdout.write(
                f"reference: {score.matched} of {score.expected} expected pairs found, {score.extracted} extracted "
                f"in those files; precision={score.precision:.3f} recall={score.recall:.3f}"
            )
        if errors:
            for error in errors:
                self.stderr.write(f"error: {error}")
            raise CommandError(f"{len(errors)} file(s) could not be read")

    def _reference(self, name: str):
        if not name:
            return None
        try:
            return read_reference(Path(name))
        except OSError as exc:
            raise CommandError(f"{name}: cannot read: {exc.strerror or exc}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise CommandError(str(exc) if isinstance(exc, ValueError) else f"{name}: not UTF-8 text") from None

    def _write(self, files: list[FoundFile], out: Path, options: dict):
        stats: dict[str, GenreStats] = defaultdict(GenreStats)
        keys, errors = [], []
        with _replacing(out) as handle:
            writer = PairWriter(handle, options["format"])
            for found in files:
                try:
                    pairs, cues = self._file_pairs(found, options)
                except (SubtitleFormatError, OSError) as exc:
                    errors.append(str(exc) if isinstance(exc, SubtitleFormatError) else f"{found.path}: {exc}")
                    continue
                for pair in pairs:
                    writer.write(pair)
                    keys.append(pair_key(pair.file, pair.interaction_cue, pair.response_cue))
                row = stats[found.genre]
                row.files, row.cues, row.pairs = row.files + 1, row.cues + cues, row.pairs + len(pairs)
        return dict(stats), keys, errors

    @staticmethod
    def _file_pairs(found: FoundFile, options: dict):
        """All pairs of one file (read whole, so a file that fails half-way adds nothing), and its cues."""
        cues = list(read_srt_cues(found.path, options["language"]))
        return list(extract_pairs(cues, str(found.path), options["max_gap"])), len(cues)
