"""Build a campaign with answers directly in the tables, so aggregation, payments, reports and the
API can be tested without going through the annotator's screens."""

from datetime import timedelta

from django.utils import timezone

from annotation.models import Dialogue, Label, Turn
from labeling.models import HIT, Assignment, Campaign, HITItem, QuizQuestion, Response, Worker
from labeling.work import seats


def make_workers(count: int, platform: str = Worker.SITE) -> list[Worker]:
    return [Worker.objects.create(platform=platform, external_id=f"w{i}") for i in range(1, count + 1)]


def make_dialogues(count: int, prefix: str = "d") -> list[Dialogue]:
    dialogues = []
    for index in range(count):
        dialogue = Dialogue.objects.create(
            content_hash=f"{prefix}-{index}", turn_count=2, external_id=f"{prefix}{index}"
        )
        Turn.objects.create(dialogue=dialogue, position=0, text=f"Opening line {index}.")
        Turn.objects.create(dialogue=dialogue, position=1, text=f"Reply line {index}.")
        dialogues.append(dialogue)
    return dialogues


def answer(assignment: Assignment, item: HITItem, text: str, seconds: float = 5.0) -> Response:
    """A response: a known label name counts as chosen from the top 3 when it is among the item's
    choices, as chosen from the list otherwise; unknown text is typed through "Other"."""
    label = Label.objects.filter(name=text).first()
    if label is None:
        return Response.objects.create(
            assignment=assignment, item=item, new_label_text=text, method=Response.OTHER_NEW, seconds_spent=seconds
        )
    method = Response.TOP3 if text in item.choices else Response.OTHER_LIST
    return Response.objects.create(assignment=assignment, item=item, label=label, method=method, seconds_spent=seconds)


def make_answered_hit(
    campaign: Campaign,
    workers: list[Worker],
    answers: dict[Dialogue, list[str]],
    *,
    quiz_answers: list[list[str]] | None = None,
    status: str = Assignment.SUBMITTED,
    kind: str = HIT.REGULAR,
) -> HIT:
    """One HIT holding the given dialogues (answers[d][k] is worker k's answer) and, optionally,
    quiz items answered by quiz_answers[q][k]."""
    hit = HIT.objects.create(
        campaign=campaign, position=campaign.hits.count() + 1, kind=kind, required_workers=len(workers)
    )
    items: list[tuple[HITItem, list[str]]] = []
    position = 1
    for dialogue, texts in answers.items():
        turn = dialogue.turns.order_by("-position").first()
        item = HITItem.objects.create(
            hit=hit, position=position, dialogue=dialogue, target_turn=turn, choices=["Angry", "Sad", "Joyful"]
        )
        items.append((item, texts))
        position += 1
    quizzes = list(QuizQuestion.objects.order_by("pk")[: len(quiz_answers or [])])
    for question, texts in zip(quizzes, quiz_answers or [], strict=True):
        item = HITItem.objects.create(hit=hit, position=position, quiz_question=question, choices=question.choices)
        items.append((item, texts))
        position += 1
    for k, worker in enumerate(workers):
        assignment = Assignment.objects.create(
            hit=hit,
            worker=worker,
            status=status,
            expires_at=timezone.now() + timedelta(hours=1),
            submitted_at=timezone.now(),
        )
        for item, texts in items:
            if k < len(texts) and texts[k]:
                answer(assignment, item, texts[k])
        if quiz_answers:
            correct = sum(1 for item, texts in items if item.is_quiz and texts[k] == item.quiz_question.gold_label.name)
            Assignment.objects.filter(pk=assignment.pk).update(quiz_correct=correct)
    seats.recount(HIT.objects.filter(pk=hit.pk))  # these rows bypassed the claim
    return hit
