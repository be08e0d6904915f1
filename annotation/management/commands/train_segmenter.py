"""`manage.py train_segmenter PATH...`: train the SVM turn segmenter on subtitle files and save it."""

import json
from datetime import UTC, datetime
from pathlib import Path

from django.core.management import BaseCommand, CommandError

from annotation.ingest.segmenter_training import (
    TrainingError,
    evaluate_labelled,
    read_labelled_turns,
    train_on_files,
)
from annotation.ingest.subtitle_paths import NoSubtitleFiles, find_files
from annotation.ingest.svm_segmenter import MODEL_VERSION

SUFFIXES = (".srt", ".xml", ".xml.gz")


class Command(BaseCommand):
    help = (
        "Train the SVM turn segmenter on subtitle files (weak labels from '- A' / '- B' cues), print accuracy, "
        "precision and recall on held-out pairs, and save the model as versioned JSON."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "paths",
            nargs="+",
            metavar="FILE|DIR",
            help="subtitle files or folders to train on (a folder's name is the genre of the files below it)",
        )
        parser.add_argument("--out", default=f"turn-segmenter-v{MODEL_VERSION}.json", help="model file to write")
        parser.add_argument("--genre", default="", help="genre of every file (default: the folder's name)")
        parser.add_argument("--language", default="en", help="ISO 639-1 code: lemmatiser and legacy encodings")
        parser.add_argument("--eval", default="", help="hand-labelled turns (annotation/ingest/data/*.tsv)")
        parser.add_argument("--c", type=float, default=0.1, help="the SVM's C")
        parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")

    def handle(self, *args, **options) -> None:
        if options["c"] <= 0:
            raise CommandError("--c must be positive")
        labelled = self._labelled(options["eval"])
        try:
            files = find_files(options["paths"], SUFFIXES, options["genre"].strip())
            result = train_on_files([(f.path, f.genre) for f in files], options["language"], options["c"])
        except (NoSubtitleFiles, TrainingError) as exc:
            raise CommandError(str(exc)) from None
        figures = {
            "version": MODEL_VERSION,
            "trained_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "files": result.files,
            "train_pairs": result.train_pairs,
            "train_changes": result.changes,
            "c": options["c"],
            "held_out": result.held_out.as_dict(),
        }
        if labelled is not None:
            evaluation = evaluate_labelled(result.model, labelled, options["genre"])
            figures["hand_labelled"] = evaluation.model.as_dict() | {"file": options["eval"]}
            figures["hand_labelled_punctuation_rule"] = evaluation.punctuation.as_dict()
        result.model.training = figures
        self._save(result.model, Path(options["out"]))
        self.stdout.write(json.dumps(figures) if options["json"] else self._summary(figures, options["out"]))

    @staticmethod
    def _labelled(name: str):
        if not name:
            return None
        try:
            return read_labelled_turns(Path(name))
        except OSError as exc:
            raise CommandError(f"{name}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{name}: not UTF-8 text") from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    @staticmethod
    def _save(model, out: Path) -> None:
        try:
            model.save(out)
        except OSError as exc:
            raise CommandError(f"{out}: cannot write the model: {exc.strerror or exc}") from None

    @staticmethod
    def _summary(figures: dict, out: str) -> str:
        def line(name: str, scores: dict) -> str:
            return (
                f"{name}: accuracy={scores['accuracy']:.3f} precision={scores['precision']:.3f} "
                f"recall={scores['recall']:.3f} ({scores['pairs']} pairs)"
            )

        lines = [
            f"trained on {figures['train_pairs']} weak pairs ({figures['train_changes']} speaker changes) "
            f"from {figures['files']} file(s)",
            line("held-out pairs", figures["held_out"]),
        ]
        if "hand_labelled" in figures:
            lines.append(line("hand-labelled pairs", figures["hand_labelled"]))
            lines.append(line("  punctuation rule there", figures["hand_labelled_punctuation_rule"]))
        lines.append(f"model v{figures['version']} saved to {out}")
        return "\n".join(lines)
