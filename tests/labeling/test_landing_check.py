"""A Prolific landing asked of Prolific: the adapter's one lookup (checked against Prolific's
documented "Retrieve a submission" through `responses`) and what the landing does with each answer
its check's job stores (run at once here, see tests/labeling/test_landing_check_job.py for the
queue): proven, refused, or (Prolific cannot be asked) a page that polls."""

from datetime import timedelta

import pytest
import requests
import responses
from django.test import Client
from django.utils import timezone

from labeling.models import Assignment, ProlificSessionCheck, Publication, Worker
from labeling.platforms import prolific_checks
from labeling.platforms.base import PlatformError
from labeling.platforms.landing import session_refusal
from labeling.platforms.prolific import API, ProlificPlatform, SubmissionLookupFailed, landing_submission
from tests.labeling.hit_factory import make_dialogues, open_campaign
from tests.labeling.platform_helpers import prolific_landing, prolific_sessions

__all__ = ["prolific_sessions"]
STUDY = "60checkstudy0000000000000"
TOKEN = "prolific-test-token"


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


def submission(session: str, participant: str, status: str = "ACTIVE", study: str = STUDY) -> dict:
    """Prolific's answer to "Retrieve a submission" (trimmed): id, study_id, participant, status."""
    return {
        "id": session,
        "study_id": study,
        "participant": participant,
        "status": status,
        "started_at": "2026-11-27T12:00:00.000000Z",
        "completed_at": None,
        "entered_code": None,
    }


# --- the adapter's lookup -----------------------------------------------------------------------


def test_the_lookup_reads_the_submission_with_the_token(api):
    api.get(
        f"{API}/submissions/64abc/",
        json=submission("64abc", "5f01"),
        match=[responses.matchers.header_matcher({"Authorization": f"Token {TOKEN}"})],
    )
    assert landing_submission(ProlificPlatform(), "64abc")["participant"] == "5f01"


def test_an_unknown_session_is_none(api):
    api.get(f"{API}/submissions/NOPE/", status=404, json={"error": {"detail": "Not found."}})
    assert landing_submission(ProlificPlatform(), "NOPE") is None


@pytest.mark.parametrize(
    "failure", [500, 429, requests.exceptions.ReadTimeout(), requests.exceptions.ConnectionError()]
)
def test_a_lookup_that_cannot_be_answered_now_is_worth_another_try_and_is_tried_once(api, failure):
    if isinstance(failure, int):
        api.get(f"{API}/submissions/64abc/", status=failure, json={}, headers={"Retry-After": "3"})
    else:
        api.get(f"{API}/submissions/64abc/", body=failure)
    with pytest.raises(SubmissionLookupFailed) as failed:
        landing_submission(ProlificPlatform(), "64abc")
    assert len(api.calls) == 1  # one short try: the job tries again, with backoff
    assert failed.value.retry_after == ("3" if isinstance(failure, int) else None)


def test_a_refused_lookup_is_not_worth_another_try(api):
    api.get(f"{API}/submissions/64abc/", status=403, json={"error": "forbidden"})
    with pytest.raises(PlatformError) as failed:
        landing_submission(ProlificPlatform(), "64abc")
    assert not isinstance(failed.value, SubmissionLookupFailed) and "403" in str(failed.value)


def test_without_a_token_nothing_is_sent(monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    with responses.RequestsMock() as mock, pytest.raises(PlatformError):
        landing_submission(ProlificPlatform(), "64abc")
    assert not mock.calls


# --- the verdict --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, why",
    [
        (None, "no such session"),
        (submission("S1", "P1", study="60otherstudy"), "a session of another study"),
        (submission("S1", "SOMEONE_ELSE"), "another participant's session"),
        (submission("S1", "P1", status="AWAITING REVIEW"), "the session is awaiting review"),
        (submission("S1", "P1", status="RETURNED"), "the session is returned"),
        (submission("S1", "P1"), ""),
        (submission("S1", "P1", status="RESERVED"), ""),  # the place is held for them
        ({"id": "S1", "study_id": STUDY, "participant_id": "P1", "status": "ACTIVE"}, ""),  # the listings' name
        ({"id": "S1", "study_id": STUDY, "participant_id": "P2", "status": "ACTIVE"}, "another participant's session"),
    ],
)
def test_prolific_stands_behind_an_active_session_of_this_study_and_participant_only(answer, why):
    assert session_refusal(answer, "P1", {STUDY}) == why


# --- the landing --------------------------------------------------------------------------------


@pytest.fixture
def campaign(db, settings):
    from labeling.work.hits import build_hits

    settings.QUIZ_DEMO_BANK = True  # its HITs take their quiz screens from the built-in bank
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(4), seed=5)
    Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=STUDY)
    return campaign


def test_prolific_not_answering_shows_a_page_that_polls_and_creates_nothing(campaign, prolific_sessions):
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY)
    prolific_sessions.down = True
    browser = Client(REMOTE_ADDR="192.0.2.1")
    response = browser.get(link)
    page = response.content.decode()
    assert response.status_code == 202 and "Checking your Prolific session" in page
    assert 'http-equiv="refresh" content="2"' in page and "could not be reached" in page
    assert prolific_sessions.calls == 4  # the job tried PLATFORM_RETRY_ATTEMPTS times, then failed
    assert not Worker.objects.exists() and "_auth_user_id" not in browser.session
    prolific_sessions.down = False  # Prolific answers again: the page's next poll queues the check again,
    ProlificSessionCheck.objects.update(answered_at=timezone.now() - timedelta(seconds=5))  # 5 s after the last
    assert browser.get(link).status_code == 302 and Assignment.objects.count() == 1
    assert ProlificSessionCheck.objects.get().status == ProlificSessionCheck.ANSWERED


def test_a_session_of_another_participant_is_refused(campaign, prolific_sessions):
    prolific_sessions.start("S1", "OWNER", STUDY)
    link = prolific_landing(campaign, worker="THIEF", session="S1", study=STUDY, made_up=True)
    response = Client().get(link)
    assert response.status_code == 403 and "another participant" in response.content.decode()
    assert not Worker.objects.exists()


def test_a_campaign_not_published_on_prolific_opens_to_no_prolific_landing(db, prolific_sessions, settings):
    from labeling.work.hits import build_hits

    settings.QUIZ_DEMO_BANK = True
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2, prefix="x"), seed=5)
    prolific_sessions.start("S1", "P1", STUDY)
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    assert Client().get(link).status_code == 403 and not Worker.objects.exists()


def test_sessions_prolific_refused_slow_the_address_and_never_shut_it(campaign, prolific_sessions, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 3
    statuses = [
        Client(REMOTE_ADDR="203.0.113.7")
        .get(prolific_landing(campaign, worker=f"F{n}", session=f"M{n}", study=STUDY, made_up=True))
        .status_code
        for n in range(5)
    ]
    # a first 404 is asked again on a reload within the session's first minutes (202, nothing made)
    # and counts toward the cap meanwhile; past three, the address is asked one session at a time,
    # the last refusal holding the turn (prolific_checks.REFUSED_TURN): the next two poll, unasked
    assert statuses == [202, 202, 202, 202, 202] and prolific_sessions.calls == 3
    assert ProlificSessionCheck.objects.count() == 3  # the waiting landings queued no check
    # another address is asked as before, and a real session from it lands
    real = prolific_landing(campaign, worker="P1", session="S1", study=STUDY)
    assert Client(REMOTE_ADDR="192.0.2.1").get(real).status_code == 302
    # the turn passed: a real session from the flooded address lands too (issue 46)
    ProlificSessionCheck.objects.update(answered_at=timezone.now() - prolific_checks.REFUSED_TURN)
    shared = prolific_landing(campaign, worker="P2", session="S2", study=STUDY)
    assert Client(REMOTE_ADDR="203.0.113.7").get(shared).status_code == 302


def test_a_blocked_id_is_refused_before_prolific_is_asked(campaign, prolific_sessions):
    browser = Client()
    assert browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY)).status_code == 302
    Worker.objects.filter(external_id="P1").update(status=Worker.BLOCKED)
    calls = prolific_sessions.calls
    assert Client().get(prolific_landing(campaign, worker="P1", session="S2", study=STUDY)).status_code == 403
    assert prolific_sessions.calls == calls
