"""Shared by the platform tests: a published campaign, workers landing from a platform link and
submitting through the annotator pages, and the retry sleep replaced (no test waits)."""

import re
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from labeling.models import Assignment, Campaign, Publication, Worker
from labeling.platforms import calls, prolific_checks
from labeling.platforms.prolific import SubmissionLookupFailed
from labeling.services.entry_tokens import publication_token
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign

SANDBOX = "https://workersandbox.mturk.com"


class ProlificSessions:
    """A stateful stand-in of Prolific's "Retrieve a submission" (GET /api/v1/submissions/{id}/,
    https://docs.prolific.com/api-reference/submissions/get-submission): a participant who opens
    the study link has an ACTIVE submission of that study; any other id is unknown (None, as the
    adapter reads a 404); `down` makes every call fail as a timeout would. Counts the calls."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}
        self.down = False
        self.calls = 0

    def start(self, session: str, participant: str, study: str, status: str = "ACTIVE") -> None:
        self.rows[session] = {"id": session, "study_id": study, "participant": participant, "status": status}

    def finish(self, session: str) -> None:
        self.rows[session]["status"] = "AWAITING REVIEW"

    def lookup(self, platform, session_id: str) -> dict | None:
        self.calls += 1
        if self.down:
            raise SubmissionLookupFailed("prolific get submission: ReadTimeout")
        row = self.rows.get(session_id)
        return dict(row) if row else None


_stand_in: list[ProlificSessions] = []


@pytest.fixture
def prolific_sessions(monkeypatch, run_jobs_at_once) -> ProlificSessions:
    """Prolific's submissions, asked by the check a Prolific landing queues
    (labeling.platforms.prolific_checks); the landings that `prolific_landing` builds are sessions Prolific
    knows unless made up. The check's job runs at once (as a worker would pick it up) and its
    retries do not wait, so a landing reads Prolific's answer on its first request."""
    sessions = ProlificSessions()
    monkeypatch.setattr(prolific_checks, "landing_submission", sessions.lookup)
    monkeypatch.setattr(calls, "sleep", lambda seconds: None)
    _stand_in.append(sessions)
    yield sessions
    _stand_in.remove(sessions)


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
        "token": publication_token(campaign, Worker.MTURK),
        "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE" if preview else assignment,
        "hitId": hit_id,
        "turkSubmitTo": SANDBOX,
    }
    if not preview:
        params["workerId"] = worker
    return f"{reverse('labeling:platform_mturk')}?{urlencode(params)}"


def prolific_landing(campaign: Campaign, *, worker: str, session: str, study: str, made_up: bool = False) -> str:
    """The study link as Prolific fills it in. Unless `made_up`, the participant opened it on
    Prolific: with the `prolific_sessions` stand-in on, the session is an active submission of
    `study`, which is the campaign's Prolific study (recorded when the campaign has none yet)."""
    if not made_up:
        prolific_knows(campaign, participant=worker, session=session, study=study)
    params = {
        "campaign": campaign.pk,
        "token": publication_token(campaign, Worker.PROLIFIC),
        "PROLIFIC_PID": worker,
        "STUDY_ID": study,
        "SESSION_ID": session,
    }
    return f"{reverse('labeling:platform_prolific')}?{urlencode(params)}"


def prolific_knows(campaign: Campaign, *, participant: str, session: str, study: str) -> None:
    """With the `prolific_sessions` stand-in on: the participant opened the study link on Prolific
    (an active submission of `study`), and `study` is the campaign's Prolific study (recorded when
    the campaign has none yet, as publishing would)."""
    if not _stand_in:
        return
    _stand_in[-1].start(session, participant, study)
    if not campaign.publications.exists():
        Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=study)


def work_through_pages(client, landing_url: str, *, wrong_quiz: int = 0) -> Assignment:
    """Land (a fresh browser session), answer every screen, submit through the page; the assignment."""
    client.logout()
    response = client.get(landing_url)
    assert response.status_code == 302, response.content.decode()[:400]
    assignment = Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))
    answer_everything(assignment, wrong_quiz=wrong_quiz)
    submitted = client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert submitted.status_code in (200, 302), submitted.content.decode()[:400]
    assignment.refresh_from_db()
    assert assignment.status == Assignment.SUBMITTED
    return assignment
