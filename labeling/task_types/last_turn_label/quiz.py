"""Scoring a label assignment's quiz screens: a quiz answer is right when it is the quiz
question's gold label, picked among the choices or through "Other", or typed in a spelling that
names it (labeling.crowd.qualification.answered_right); any other typed text is wrong."""

from annotation.models import Label
from labeling import fast_path
from labeling.crowd.qualification import answered_right
from labeling.models import HITItem, QuizQuestion, Response
from labeling.task_types.base import QuizScore, WrongQuizAnswer, quiz_items

_ASSIGNMENT, _HIT, _SEAT = fast_path.STAND_IN_ASSIGNMENT, fast_path.STAND_IN_HIT, fast_path.STAND_IN_SEAT
# what a submission reads to score its quiz: compiled once per process with the fast path on
_ANSWERS = fast_path.Compiled(
    lambda assignment_id: Response.objects.filter(
        assignment_id=assignment_id, item__quiz_question__isnull=False
    ).select_related("label"),
    _ASSIGNMENT,
)
_QUIZ_ITEMS = fast_path.Compiled(
    lambda hit_id, seat: quiz_items(hit_id, seat).select_related("quiz_question__gold_label"), _HIT, _SEAT
)


def _quiz_answers(assignment) -> dict[int, Response]:
    if not fast_path.enabled():
        return {response.item_id: response for response in _ANSWERS.queryset(assignment.pk)}
    answers = {}
    for row in _ANSWERS.rows(assignment.pk):
        response, label = fast_path.instances(row, Response, Label)
        response.label = label if response.label_id is not None else None
        answers[response.item_id] = response
    return answers


def _quiz_items(assignment) -> list[HITItem]:
    if not fast_path.enabled():
        return list(_QUIZ_ITEMS.queryset(assignment.hit_id, assignment.seat))
    items = []
    for row in _QUIZ_ITEMS.rows(assignment.hit_id, assignment.seat):
        item, question, gold = fast_path.instances(row, HITItem, QuizQuestion, Label)
        question.gold_label = gold
        item.quiz_question = question
        items.append(item)
    return items


def score_quiz(assignment) -> QuizScore:
    """The assignment's quiz screens scored from its saved answers (no side effects)."""
    responses = _quiz_answers(assignment)
    quiz_items = _quiz_items(assignment)
    correct, wrong = 0, []
    for item in quiz_items:
        gold = item.quiz_question.gold_label
        response = responses.get(item.pk)
        if response is not None and answered_right(response.answer, gold.name):
            correct += 1
            continue
        given = response.answer if response is not None else "(no answer)"
        wrong.append(
            WrongQuizAnswer(
                item.position,
                item.quiz_question.text,
                given,
                gold.name,
                item.quiz_question.explanation,
                item.quiz_question_id,
            )
        )
    return QuizScore(correct, len(quiz_items), wrong)
