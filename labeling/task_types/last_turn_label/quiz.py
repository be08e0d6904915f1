"""Scoring a label assignment's quiz screens: a quiz answer is right when it is the quiz
question's gold label, picked among the choices or through "Other", or typed in a spelling that
names it (labeling.crowd.qualification.answered_right); any other typed text is wrong."""

from labeling.crowd.qualification import answered_right
from labeling.models import Response
from labeling.task_types.base import QuizScore, WrongQuizAnswer, quiz_items_of


def score_quiz(assignment) -> QuizScore:
    """The assignment's quiz screens scored from its saved answers (no side effects)."""
    answers = Response.objects.filter(assignment=assignment, item__quiz_question__isnull=False)
    responses = {response.item_id: response for response in answers.select_related("label")}
    quiz_items = list(quiz_items_of(assignment).select_related("quiz_question__gold_label"))
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
