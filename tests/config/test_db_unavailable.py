"""A database that is briefly away answers 503 with Retry-After (config/web/db_unavailable.py), never a
500 with a traceback; sending the same answer or submit again afterwards stores it once."""

import re
from unittest import mock

import pytest
from django.db import IntegrityError, InterfaceError, OperationalError
from django.urls import reverse

from labeling.hits import build_hits
from labeling.models import Assignment, Response
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign, screen_item

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

HTMX = {"HTTP_HX_REQUEST": "true"}
EVERY_QUERY = "django.db.backends.utils.CursorWrapper.execute"


@pytest.fixture
def assignment(client, annotators):
    campaign = open_campaign(dialogues_per_hit=4, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(4), seed=11)
    client.force_login(annotators[0])
    claimed = client.post(reverse("labeling:claim"))
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", claimed["Location"]).group(1)))


def answer_url(assignment, position=1):
    return reverse("labeling:answer_item", args=[assignment.pk, position])


def first_choice(assignment):
    return screen_item(assignment, 1).choices[0]


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_a_page_asked_while_every_query_fails_is_a_503_page_that_needs_no_database(client, assignment, error):
    with mock.patch(EVERY_QUERY, side_effect=error("server closed the connection unexpectedly")):
        response = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1]))
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    page = response.content.decode()
    assert "Briefly unavailable" in page and "try again" in page
    assert "Traceback" not in page and "server closed" not in page


def test_an_autosave_while_the_database_is_away_is_a_503_partial_and_its_replay_stores_it_once(client, assignment):
    form = {"go": "stay", "answer": first_choice(assignment)}
    with mock.patch(EVERY_QUERY, side_effect=OperationalError("the database system is shutting down")):
        failed = client.post(answer_url(assignment), form, **HTMX)
    assert failed.status_code == 503 and failed["Retry-After"] == "2"
    assert 'role="alert"' in failed.content.decode() and "<html" not in failed.content.decode()
    assert not Response.objects.filter(assignment=assignment).exists()

    assert client.post(answer_url(assignment), form, **HTMX).status_code == 200
    assert client.post(answer_url(assignment), form, **HTMX).status_code == 200  # the page's retry, once more
    assert list(Response.objects.filter(assignment=assignment).values_list("label__name", flat=True)) == [
        form["answer"]
    ]


def test_next_sent_again_after_its_answer_was_lost_stores_the_answer_once(client, assignment):
    form = {"go": "next", "answer": first_choice(assignment), "seconds": "3"}
    first = client.post(answer_url(assignment), form, **HTMX)
    stored = Response.objects.filter(assignment=assignment)
    seconds = stored.get().seconds_spent
    assert 0 < seconds <= 3  # the browser's 3 s, bounded by the server's own clock
    replay = client.post(answer_url(assignment), form, **HTMX)
    assert first.status_code == replay.status_code == 200
    assert "Dialog 2/" in first.content.decode() and "Dialog 2/" in replay.content.decode()
    assert stored.count() == 1
    assert stored.get().seconds_spent == seconds  # the replay, unchanged, wrote nothing


def test_a_submit_sent_again_changes_nothing_and_leads_to_the_feedback(client, assignment):
    answer_everything(assignment)
    url = reverse("labeling:assignment_submit", args=[assignment.pk])
    first = client.post(url, **HTMX)
    assert first.status_code == 204
    assert first["HX-Redirect"] == reverse("labeling:assignment_feedback", args=[assignment.pk])
    assignment.refresh_from_db()
    code, submitted_at = assignment.completion_code, assignment.submitted_at

    replay = client.post(url, **HTMX)
    assert replay.status_code == 204  # no 302 for htmx to follow and swap into the review
    detail = replay["HX-Redirect"]
    assert client.get(detail)["Location"] == reverse("labeling:assignment_feedback", args=[assignment.pk])
    assignment.refresh_from_db()
    assert (assignment.status, assignment.completion_code, assignment.submitted_at) == (
        Assignment.SUBMITTED,
        code,
        submitted_at,
    )
    assert Assignment.objects.filter(hit=assignment.hit, status=Assignment.SUBMITTED).count() == 1


def test_a_job_queued_while_the_broker_is_away_is_a_503(client, researcher, tiny_corpus):
    from kombu.exceptions import OperationalError as BrokerUnavailable

    campaign = open_campaign()
    client.force_login(researcher)
    # views run in autocommit: start_job publishes at once, inside the view
    with mock.patch("jobs.runtime._queue", side_effect=BrokerUnavailable("Connection refused")):
        response = client.post(reverse("labeling:campaign_aggregate", args=[campaign.pk]))
    assert response.status_code == 503 and response["Retry-After"] == "2"
    assert "Briefly unavailable" in response.content.decode()


def test_other_database_errors_are_not_hidden_as_unavailable(client, assignment):
    bug = IntegrityError("a real bug")
    with mock.patch("labeling.views.save_answer", side_effect=bug), pytest.raises(IntegrityError):
        client.post(answer_url(assignment), {"go": "stay", "answer": first_choice(assignment)}, **HTMX)
