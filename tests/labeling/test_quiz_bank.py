"""The built-in quiz bank (seeded by a migration) and `import_quiz` for researchers' own CSVs."""

import pytest
from django.core.management import CommandError, call_command

from annotation.taxonomy import LABEL_NAMES, TAXONOMY
from labeling.quiz_bank import BUILTIN_QUIZ, QuizFileError, check_bank, label_kinds, parse_quiz_csv


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


def test_distractors_are_chosen_from_the_same_kind():
    kinds = label_kinds()
    specs = parse_quiz_csv("text,label\nCould you pass the salt?,questioning\n", "q.csv", kinds)
    spec = specs[0]
    assert spec.label == "Questioning"
    assert all(kinds[d] == "intent" for d in spec.distractors)
    assert spec.label not in spec.distractors and len(set(spec.distractors)) == 2
    assert parse_quiz_csv("text,label\nCould you pass the salt?,Questioning\n", "q.csv", kinds) == specs


def test_neutral_has_no_sibling_so_it_borrows_distractors():
    spec = parse_quiz_csv("text,label\nThe bus is blue.,Neutral\n", "q.csv", label_kinds())[0]
    assert len(set(spec.distractors)) == 2 and "Neutral" not in spec.distractors


def test_an_unknown_label_is_an_error_naming_the_line():
    content = "text,label\nI won!,Joyful\nHmm.,Pensive\n"
    with pytest.raises(QuizFileError, match=r"q.csv: line 3: unknown label 'Pensive'"):
        parse_quiz_csv(content, "q.csv", label_kinds())


def test_a_missing_column_is_an_error():
    with pytest.raises(QuizFileError, match="missing column"):
        parse_quiz_csv("sentence,label\nx,Sad\n", "q.csv", label_kinds())


@pytest.mark.django_db
def test_the_migration_seeded_the_builtin_questions():
    from labeling.models import QuizQuestion

    seeded = QuizQuestion.objects.filter(source=QuizQuestion.BUILTIN)
    assert seeded.count() == len(BUILTIN_QUIZ)
    assert set(seeded.values_list("gold_label__name", flat=True)) == {spec.name for spec in TAXONOMY}
    question = seeded.get(gold_label__name="Furious")
    assert "Furious" in question.choices and len(question.choices) == 3 and question.explanation


@pytest.mark.django_db
def test_import_quiz_adds_questions_and_is_idempotent(tmp_path):
    from labeling.models import QuizQuestion

    path = tmp_path / "mine.csv"
    path.write_text("text,label,explanation\nMy cake won first prize!,proud,Own achievement.\nOk.,Acknowledging,\n")
    call_command("import_quiz", str(path))
    call_command("import_quiz", str(path))
    imported = QuizQuestion.objects.filter(source=QuizQuestion.IMPORTED)
    assert imported.count() == 2
    cake = imported.get(gold_label__name="Proud")
    assert cake.explanation == "Own achievement." and "Proud" in cake.choices


@pytest.mark.django_db
def test_import_quiz_saves_nothing_when_a_line_is_bad(tmp_path):
    from labeling.models import QuizQuestion

    path = tmp_path / "bad.csv"
    path.write_text("text,label\nfine,Sad\nbad,NotALabel\n")
    with pytest.raises(CommandError, match="line 3"):
        call_command("import_quiz", str(path))
    assert not QuizQuestion.objects.filter(source=QuizQuestion.IMPORTED).exists()
