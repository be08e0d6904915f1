"""Who may see and change an assignment: its annotator only. Every role is tried on every page."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from labeling.actions.claim import claim_next_hit
from labeling.models import Assignment, Response
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import (
    answer_everything,
    make_dialogues,
    open_campaign,
    screen_item,
)

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

GET_PAGES = ["assignment_detail", "assignment_review", "assignment_feedback", "assignment_done"]


@pytest.fixture
def assignment(db, annotators):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=4)
    return claim_next_hit(worker_for_user(annotators[0]))


def urls_to_read(assignment) -> list[str]:
    return [reverse(f"labeling:{name}", args=[assignment.pk]) for name in GET_PAGES] + [
        reverse("labeling:assignment_item", args=[assignment.pk, 1])
    ]


def answer_url(assignment) -> str:
    return reverse("labeling:answer_item", args=[assignment.pk, 1])


def submit_url(assignment) -> str:
    return reverse("labeling:assignment_submit", args=[assignment.pk])


def state(assignment):
    row = Assignment.objects.get(pk=assignment.pk)
    return (
        row.status,
        row.completion_code,
        sorted(Response.objects.filter(assignment=row).values_list("item_id", "label_id")),
    )


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_annotator_reads_and_changes_their_own_assignment(assignment, annotators):
    client = logged_in(annotators[0])
    for url in urls_to_read(assignment):
        assert client.get(url).status_code in (200, 302), url
    item = screen_item(assignment, 1)
    assert client.post(answer_url(assignment), {"answer": item.choices[0]}).status_code == 302
    assert Response.objects.filter(assignment=assignment).count() == 1


@pytest.mark.parametrize("role", ["other annotator", "outsider", "researcher"])
def test_nobody_else_can_see_or_change_an_assignment(assignment, annotators, outsider, researcher, role):
    user = {"other annotator": annotators[1], "outsider": outsider, "researcher": researcher}[role]
    client = logged_in(user)
    answer_everything(assignment)
    before = state(assignment)
    for url in urls_to_read(assignment):
        assert client.get(url).status_code == 404, url
    item = screen_item(assignment, 1)
    assert client.post(answer_url(assignment), {"answer": item.choices[1], "go": "stay"}).status_code == 404
    assert client.post(submit_url(assignment)).status_code == 404
    assert state(assignment) == before


@pytest.mark.parametrize("role", ["other annotator", "outsider", "researcher"])
def test_every_signed_in_role_has_its_own_home_and_tutorial(assignment, annotators, outsider, researcher, role):
    user = {"other annotator": annotators[1], "outsider": outsider, "researcher": researcher}[role]
    client = logged_in(user)
    assert client.get(reverse("labeling:worker_home")).status_code == 200
    assert client.get(reverse("labeling:instructions")).status_code == 200
    assert f"/assignments/{assignment.pk}/" not in client.get(reverse("labeling:worker_home")).content.decode()


def test_anonymous_visitors_are_sent_to_log_in_and_change_nothing(assignment, client):
    before = state(assignment)
    pages = [reverse("labeling:worker_home"), reverse("labeling:instructions"), *urls_to_read(assignment)]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    for url in (answer_url(assignment), submit_url(assignment), reverse("labeling:claim")):
        response = client.post(url, {"answer": "Sad"})
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
    assert state(assignment) == before
    assert Assignment.objects.count() == 1


def test_every_post_needs_the_csrf_token(assignment, annotators):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotators[0])
    item = screen_item(assignment, 1)
    for url in (answer_url(assignment), submit_url(assignment), reverse("labeling:claim")):
        assert client.post(url, {"answer": item.choices[0]}).status_code == 403, url
    assert not Response.objects.exists()
    client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1]))  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        answer_url(assignment), {"answer": item.choices[0]}, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert Response.objects.filter(assignment=assignment).count() == 1


def test_a_second_submission_is_refused_with_a_message_and_changes_nothing(assignment, annotators):
    client = logged_in(annotators[0])
    answer_everything(assignment)
    assert client.post(submit_url(assignment)).status_code == 302
    before = state(assignment)
    page = client.post(submit_url(assignment), follow=True).content.decode()
    assert "already submitted" in page
    assert state(assignment) == before


def test_changing_a_submitted_assignment_is_refused(assignment, annotators):
    client = logged_in(annotators[0])
    answer_everything(assignment)
    client.post(submit_url(assignment))
    before = state(assignment)
    item = screen_item(assignment, 1)
    other = next(c for c in item.choices if c != item.choices[0])
    response = client.post(answer_url(assignment), {"answer": other, "go": "stay"}, HTTP_HX_REQUEST="true")
    assert "already submitted" in response.content.decode()
    assert state(assignment) == before


def test_a_submission_after_the_time_limit_is_refused(assignment, annotators):
    client = logged_in(annotators[0])
    answer_everything(assignment)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    before = state(assignment)
    page = client.post(submit_url(assignment), follow=True).content.decode()
    assert "time limit" in page
    assert state(assignment) == before
    assert (
        "time limit"
        in client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1]), follow=True).content.decode()
    )


def test_a_blocked_worker_cannot_start_a_hit(assignment, annotators):
    worker = worker_for_user(annotators[1])
    worker.status = worker.BLOCKED
    worker.save()
    page = logged_in(annotators[1]).post(reverse("labeling:claim"), follow=True).content.decode()
    assert "blocked" in page
    assert not Assignment.objects.filter(worker=worker).exists()


def test_next_on_an_expired_hit_leaves_for_the_page_that_says_why(assignment, annotators):
    client = logged_in(annotators[0])
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    item = screen_item(assignment, 1)
    response = client.post(answer_url(assignment), {"answer": item.choices[0], "go": "next"}, HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == reverse("labeling:assignment_detail", args=[assignment.pk])
    assert not Response.objects.exists()
    assert "time limit" in client.get(response["HX-Redirect"]).content.decode()
