from django.db import migrations

# Like the label seed, this reads the pure quiz bank module: the questions are data kept stable
# on purpose, and a change to them deserves a migration of its own.
from labeling.crowd.quiz_bank import BUILTIN_QUIZ


def seed_quiz(apps, schema_editor):
    Label = apps.get_model("annotation", "Label")
    QuizQuestion = apps.get_model("labeling", "QuizQuestion")
    labels = {label.name: label for label in Label.objects.all()}
    for spec in BUILTIN_QUIZ:
        QuizQuestion.objects.update_or_create(
            text=spec.text,
            source="builtin",
            defaults={"gold_label": labels[spec.label], "choices": spec.choices, "explanation": spec.explanation},
        )


def unseed_quiz(apps, schema_editor):
    QuizQuestion = apps.get_model("labeling", "QuizQuestion")
    QuizQuestion.objects.filter(source="builtin", text__in=[spec.text for spec in BUILTIN_QUIZ]).delete()


class Migration(migrations.Migration):
    dependencies = [("labeling", "0002_widen_answer_text_and_source_hash"), ("annotation", "0002_seed_labels")]
    operations = [migrations.RunPython(seed_quiz, unseed_quiz)]
