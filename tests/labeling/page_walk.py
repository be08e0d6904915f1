"""A worker's HIT walked through the annotator pages, one screen after another, as a browser does:
each answer posted with Next and the seconds the page measured, then the review and Submit.
Seat-aware: the screens are the ones the assignment's seat sees (labeling.fast_path.screen)."""

import re
from collections.abc import Callable

from django.test import Client
from django.urls import reverse

from labeling.fast_path import screen as screens
from labeling.models import Assignment, HITItem

NEW_LABEL = "__new__"  # the "Other: a new label" radio's value (last_turn_label.screen.NEW_LABEL)

Pick = Callable[[HITItem], tuple[str, str]]  # a screen's item -> (answer field, typed new label)


def first_choice(item: HITItem) -> tuple[str, str]:
    """The first of the three choices on a work screen; the known answer on a quiz screen."""
    if item.is_quiz:
        return item.quiz_question.gold_label.name, ""
    return item.choices[0], ""


def landed(response) -> Assignment:
    """The assignment a landing (or a claim) redirected to."""
    assert response.status_code == 302, response.content.decode()[:400]
    found = re.search(r"/assignments/(\d+)/", response["Location"])
    assert found, response["Location"]
    return Assignment.objects.get(pk=int(found.group(1)))


def claim(client: Client, campaign) -> Assignment:
    return landed(client.post(reverse("labeling:claim"), {"campaign": campaign.pk}))


def screen_items(assignment: Assignment) -> dict[int, HITItem]:
    return {position: screen.item for position, screen in screens.screens_of(assignment.hit, assignment.seat).items()}


def answer_screen(
    client: Client, assignment: Assignment, position: int, answer: str, new_label: str = "", *, seconds=1
):
    """Post one screen's answer with Next; the response."""
    url = reverse("labeling:answer_item", args=[assignment.pk, position])
    return client.post(url, {"answer": answer, "new_label": new_label, "go": "next", "seconds": str(seconds)})


def walk(client: Client, assignment: Assignment, *, pick: Pick = first_choice, seconds=1, clock=None) -> None:
    """Answer every screen of the assignment's seat (`clock`, when given, moves on `seconds`
    before each answer, so the server's own bound lets them count)."""
    for position, item in sorted(screen_items(assignment).items()):
        if clock is not None:
            clock.advance(seconds)
        answer, typed = pick(item)
        response = answer_screen(client, assignment, position, answer, typed, seconds=seconds)
        assert response.status_code in (200, 302), response.content.decode()[:400]


def submit(client: Client, assignment: Assignment) -> Assignment:
    response = client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert response.status_code in (200, 302), response.content.decode()[:400]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.SUBMITTED, assignment.status
    return assignment


def worker_rows(html: str) -> dict[int, str]:
    """The dashboard's worker table: each row's worker id -> the row's text (tags removed)."""
    rows = re.findall(r'<tr id="worker-(\d+)">(.*?)</tr>', html, flags=re.S)
    return {int(pk): " ".join(re.sub(r"<[^>]+>", " ", body).split()) for pk, body in rows}
