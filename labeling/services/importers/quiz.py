"""Fill the secret quiz pool: whole corpus dialogues with a known answer, all or none.

Two sources: a researcher's CSV (`dialogue,label[,explanation]`, see labeling.crowd.quiz_bank) naming
dialogues they verified, or a campaign's unanimous gold (every worker gave the same label).
"""

from pathlib import Path

from django.db import transaction

from annotation.models import Dialogue, Label, Turn
from annotation.record import audit
from labeling.crowd.quiz_bank import PoolRow, QuizFileError, parse_quiz_csv
from labeling.models import AggregatedLabel, QuizQuestion


def import_quiz_file(path: Path) -> list[QuizQuestion]:
    try:
        content = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise QuizFileError(f"{path}: cannot read: {error}") from error
    labels = _labels()
    rows = parse_quiz_csv(content, str(path), labels)
    known = set(Dialogue.objects.filter(pk__in=[row.dialogue_id for row in rows]).values_list("pk", flat=True))
    for row in rows:
        if row.dialogue_id not in known:
            raise QuizFileError(f"{path}: line {row.line}: no dialogue with id {row.dialogue_id}")
    return _store(rows, labels)


def import_unanimous(campaign_id: int, minimum_answers: int = 3) -> list[QuizQuestion]:
    """Every dialogue of the campaign whose `minimum_answers` or more answers all agreed."""
    gold = AggregatedLabel.objects.filter(
        campaign_id=campaign_id, agreement=1.0, answer_count__gte=minimum_answers, label__isnull=False
    ).values_list("dialogue_id", "label__name")
    return _store([PoolRow(0, dialogue_id, name, "") for dialogue_id, name in gold], _labels())


def _labels() -> dict[str, Label]:
    return {label.name: label for label in Label.objects.filter(is_active=True).exclude(kind=Label.PROPOSED)}


def _store(rows: list[PoolRow], labels: dict[str, Label]) -> list[QuizQuestion]:
    """One pool item per dialogue (keyed on it: importing again updates, never doubles); an item
    whose known answer changes gets an audit entry (workers' quiz marks were decided against it)."""
    last_text = _last_turn_texts([row.dialogue_id for row in rows])
    with transaction.atomic():
        before = dict(
            QuizQuestion.objects.select_for_update(of=("self",))
            .filter(dialogue_id__in=list(last_text), gold_label__isnull=False)
            .values_list("dialogue_id", "gold_label__name")
        )
        stored = [
            QuizQuestion.objects.update_or_create(
                dialogue_id=row.dialogue_id,
                defaults={
                    "text": last_text[row.dialogue_id],
                    "gold_label": labels[row.label],
                    "explanation": row.explanation,
                    "source": QuizQuestion.IMPORTED,
                    "choices": [],
                    "is_active": True,
                },
            )[0]
            for row in rows
            if row.dialogue_id in last_text
        ]
        for question in stored:
            old = before.get(question.dialogue_id)
            if old is not None and old != question.gold_label.name:
                audit.record(
                    audit.QUIZ_GOLD_CHANGED, None, question, {"label": old}, {"label": question.gold_label.name}
                )
        return stored


def _last_turn_texts(dialogue_ids: list[int]) -> dict[int, str]:
    texts: dict[int, str] = {}
    rows = Turn.objects.filter(dialogue_id__in=dialogue_ids).order_by("dialogue_id", "position")
    for dialogue_id, text in rows.values_list("dialogue_id", "text"):
        texts[dialogue_id] = text  # the last one wins
    return texts
