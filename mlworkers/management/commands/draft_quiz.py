"""python manage.py draft_quiz --out quiz.csv [--count 40] [--min-confidence 0.9]

A first quiz pool with no earlier campaign: writes dialogues whose last turn the suggestion model
(the weak labeler, before any gold) labels confidently, mixed over the labels as the campaign's
candidates are, as `dialogue,label,text` rows. The labels are the model's guesses: read each
dialogue (its id is on /corpus/), correct or delete the row, then `python manage.py import_quiz
quiz.csv`. The dialogues you import leave the candidates, so no quiz dialogue is also work.
"""

import csv
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import ModelVersion, Turn
from mlworkers.chain.candidates import ranked_candidates


class Command(BaseCommand):
    help = "Write a draft quiz pool file (dialogue,label,text) from the suggestion model's confident labels, to check and import."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--out", type=Path, required=True, help="the CSV to write")
        parser.add_argument("--count", type=int, default=40, help="dialogues to draft (default 40)")
        parser.add_argument("--min-confidence", type=float, default=0.9, help="the model's confidence at least")
        parser.add_argument("--language", default="en", help="the campaign's language (default en)")

    def handle(self, *args, out: Path, count: int, min_confidence: float, language: str, **options) -> None:
        if count < 1:
            raise CommandError("--count must be at least 1")
        if not 0 <= min_confidence <= 1:
            raise CommandError("--min-confidence must be between 0 and 1")
        version = ModelVersion.objects.suggester()
        if version is None:
            raise CommandError(
                "no suggestion model yet: run `manage.py run_pipeline --steps weak_train,weak_apply` first"
            )
        ranked = ranked_candidates(version, min_confidence=min_confidence, per_label=count, language=language)
        chosen = [r.candidate for r in ranked[:count]]
        if not chosen:
            raise CommandError(f"no dialogue's last turn reaches --min-confidence {min_confidence:g}; try a lower one")
        self._write(out, chosen)
        self.stdout.write(f"{len(chosen)} dialogue(s) drafted in {out}: check every label, then import_quiz {out}")

    def _write(self, out: Path, chosen) -> None:
        texts = _dialogue_texts([candidate.dialogue_id for candidate in chosen])
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["dialogue", "label", "text"])
            for candidate in chosen:
                writer.writerow([candidate.dialogue_id, candidate.label, texts[candidate.dialogue_id]])


def _dialogue_texts(dialogue_ids: list[int]) -> dict[int, str]:
    """Each dialogue's turns joined by ' / ', the last one being the turn the label is for."""
    texts: dict[int, list[str]] = {pk: [] for pk in dialogue_ids}
    turns = Turn.objects.filter(dialogue_id__in=dialogue_ids).order_by("dialogue_id", "position")
    for dialogue_id, text in turns.values_list("dialogue_id", "text"):
        texts[dialogue_id].append(text)
    return {pk: " / ".join(lines) for pk, lines in texts.items()}
