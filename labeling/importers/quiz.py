"""Store a researcher's quiz CSV (`text,label[,explanation]`) as active QuizQuestions, all or none."""

from pathlib import Path

from django.db import transaction

from annotation.models import Label
from labeling.models import QuizQuestion
from labeling.quiz_bank import QuizFileError, parse_quiz_csv


def import_quiz_file(path: Path) -> list[QuizQuestion]:
    try:
        content = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise QuizFileError(f"{path}: cannot read: {error}") from error
    labels = {label.name: label for label in Label.objects.filter(is_active=True)}
    specs = parse_quiz_csv(content, str(path), {name: label.kind for name, label in labels.items()})
    with transaction.atomic():
        return [
            QuizQuestion.objects.update_or_create(
                text=spec.text,
                source=QuizQuestion.IMPORTED,
                defaults={
                    "gold_label": labels[spec.label],
                    "choices": spec.choices,
                    "explanation": spec.explanation,
                    "is_active": True,
                },
            )[0]
            for spec in specs
        ]
