"""The built-in DEMO quiz bank (seeded by a migration); the real pool is tested in test_quiz_pool."""

import pytest

from annotation.taxonomy import LABEL_NAMES, TAXONOMY
from labeling.crowd.quiz_bank import BUILTIN_QUIZ, check_bank


def test_the_bank_has_a_question_for_each_of_the_41_labels_with_valid_choices():
    assert len(LABEL_NAMES) == 41
    assert check_bank(BUILTIN_QUIZ, LABEL_NAMES) == []
    assert all(spec.explanation for spec in BUILTIN_QUIZ)
    assert len({spec.text for spec in BUILTIN_QUIZ}) == len(BUILTIN_QUIZ)


def test_the_gold_label_does_not_always_sit_in_the_same_place():
    places = {spec.choices.index(spec.label) for spec in BUILTIN_QUIZ}
    assert places == {0, 1, 2}


def test_check_bank_reports_a_missing_label_and_bad_choices():
    problems = check_bank(BUILTIN_QUIZ[:-1], LABEL_NAMES)
    assert problems == ["no question for Neutral"]
    broken = BUILTIN_QUIZ[0].__class__("x", "Sad", ("Sad", "Nope"), "e")
    assert check_bank([broken], ["Sad"]) == ["bad choices for 'x'"]


@pytest.mark.django_db
def test_the_migration_seeded_the_builtin_questions():
    from labeling.models import QuizQuestion

    seeded = QuizQuestion.objects.filter(source=QuizQuestion.BUILTIN)
    assert seeded.count() == len(BUILTIN_QUIZ)
    assert set(seeded.values_list("gold_label__name", flat=True)) == {spec.name for spec in TAXONOMY}
    question = seeded.get(gold_label__name="Furious")
    assert "Furious" in question.choices and len(question.choices) == 3 and question.explanation
