"""Scoring a label assignment's quiz screens: a quiz answer is right when it is the quiz
question's gold label, picked among the choices or through "Other", or typed in a spelling that
names it (labeling.crowd.qualification.answered_right); any other typed text is wrong."""

from django.db import connection

from labeling.crowd.qualification import answered_right
from labeling.fast_path import compiled as fast_path
from labeling.models import Response
from labeling.task_types.base import QuizScore, WrongQuizAnswer, quiz_items

_ASSIGNMENT, _HIT, _SEAT = fast_path.STAND_IN_ASSIGNMENT, fast_path.STAND_IN_HIT, fast_path.STAND_IN_SEAT
# what a submission reads to score its quiz, as values (model instances of every answer, item,
# question and label were a third of a submission's CPU): compiled once per process with the fast
# path on, run by the ORM with it off
_ANSWERS = fast_path.Compiled(
    lambda assignment_id: Response.objects.filter(
        assignment_id=assignment_id, item__quiz_question__isnull=False
    ).values_list("item_id", "data", "label__name", "new_label_text"),
    _ASSIGNMENT,
)
_QUIZ_ITEMS = fast_path.Compiled(
    lambda hit_id, seat: quiz_items(hit_id, seat).values_list(
        "pk",
        "position",
        "quiz_question_id",
        "quiz_question__text",
        "quiz_question__explanation",
        "quiz_question__gold_label__name",
    ),
    _HIT,
    _SEAT,
)


def _quiz_answers(assignment) -> dict[int, str]:
    """item id -> the answer given on that quiz screen, as the worker's pages show it."""
    if not fast_path.enabled():
        read = _ANSWERS.queryset(assignment.pk)
    else:
        data = Response._meta.get_field("data")  # the ORM's loading of a JSON column, on the raw row
        read = (
            (item, data.from_db_value(raw, None, connection), *rest)
            for item, raw, *rest in _ANSWERS.rows(assignment.pk)
        )
    return {item_id: Response.answer_shown(value, name, text) for item_id, value, name, text in read}


def _quiz_items(assignment) -> list[tuple]:
    """(item id, position, question id, question text, explanation, gold label name) per quiz screen."""
    if not fast_path.enabled():
        return list(_QUIZ_ITEMS.queryset(assignment.hit_id, assignment.seat))
    return _QUIZ_ITEMS.rows(assignment.hit_id, assignment.seat)


def score_quiz(assignment) -> QuizScore:
    """The assignment's quiz screens scored from its saved answers (no side effects)."""
    answers = _quiz_answers(assignment)
    items = _quiz_items(assignment)
    correct, wrong = 0, []
    for item_id, position, question_id, text, explanation, gold in items:
        given = answers.get(item_id)
        if given is not None and answered_right(given, gold):
            correct += 1
            continue
        wrong.append(
            WrongQuizAnswer(
                position, text, given if given is not None else "(no answer)", gold, explanation, question_id
            )
        )
    return QuizScore(correct, len(items), wrong)
