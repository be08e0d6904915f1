"""Shared by the platform tests: a published campaign, workers landing from a platform link and
submitting through the annotator pages, and the retry sleep replaced (no test waits)."""

from urllib.parse import urlencode

import pytest
from django.urls import reverse

from labeling.hits import build_hits
from labeling.models import Assignment, Campaign
from labeling.platforms import calls
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign

SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture
def slept(monkeypatch) -> list[float]:
    """The backoff delays `calls.call` asked for, instead of sleeping them."""
    delays: list[float] = []
    monkeypatch.setattr(calls, "sleep", delays.append)
    return delays


def draft_campaign(hits: int = 2, **fields) -> Campaign:
    """A draft campaign of `hits` HITs, each with one dialogue and one quiz screen."""
    values = {
        "status": Campaign.DRAFT,
        "dialogues_per_hit": 1,
        "quiz_per_hit": 1,
        "approval_quiz_mark": 1,
        "quiz_pass_mark": 1,
    }
    values.update(fields)
    campaign = open_campaign(**values)
    build_hits(campaign, make_dialogues(hits, prefix=f"c{campaign.pk}-"), seed=3)
    return campaign


def mturk_landing(campaign: Campaign, *, worker: str, assignment: str, hit_id: str, preview: bool = False) -> str:
    params = {
        "campaign": campaign.pk,
        "token": campaign.entry_token,
        "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE" if preview else assignment,
        "hitId": hit_id,
        "turkSubmitTo": SANDBOX,
    }
    if not preview:
        params["workerId"] = worker
    return f"{reverse('labeling:platform_mturk')}?{urlencode(params)}"


def prolific_landing(campaign: Campaign, *, worker: str, session: str, study: str) -> str:
    params = {
        "campaign": campaign.pk,
        "token": campaign.entry_token,
        "PROLIFIC_PID": worker,
        "STUDY_ID": study,
        "SESSION_ID": session,
    }
    return f"{reverse('labeling:platform_prolific')}?{urlencode(params)}"


def work_through_pages(client, landing_url: str, *, wrong_quiz: int = 0) -> Assignment:
    """Land (a fresh browser session), answer every screen, submit through the page; the assignment."""
    client.logout()
    response = client.get(landing_url)
    assert response.status_code == 302, response.content.decode()[:400]
    assignment = Assignment.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    answer_everything(assignment, wrong_quiz=wrong_quiz)
    submitted = client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert submitted.status_code in (200, 302), submitted.content.decode()[:400]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.SUBMITTED
    return assignment
