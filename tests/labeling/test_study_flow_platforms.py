"""The study flow behind the platforms' landings, against the stateful stand-ins
(labeling.platforms.standin): a participant who declines consent or fails the practice holds no
seat and no place, leaves no paid submission, and is sent back as the platform documents
(Prolific: a return, or the researcher's no-consent / screen-out code; MTurk: return the HIT);
one who passes comes back through their landing link and gets their HIT."""

import re
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from labeling.models import Assignment, PaymentEntry, Worker
from labeling.platforms import prolific_checks, standin
from labeling.platforms.standin.crowd import StudyRun
from labeling.services.campaigns import change_campaign_settings
from labeling.services.entry_tokens import publication_token
from labeling.study_flow.demo import DEMO_FLOW
from tests.labeling.platform_helpers import mturk_landing
from tests.labeling.platform_study import platforms, study_campaign

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db
ITEMS = DEMO_FLOW["practice"]["items"]
WRONG = [next(c for c in item["choices"] if c != item["answer"]) for item in ITEMS]
RIGHT = [item["answer"] for item in ITEMS]
STEP = re.compile(r'<main[^>]*data-step="([a-z]+)"')


def published(platform: str, **platform_codes) -> StudyRun:
    """A campaign with the demo's study flow, published on a fresh stand-in."""
    campaign = study_campaign(platform, qualified=False)
    flow = {**DEMO_FLOW, "platform": platform_codes} if platform_codes else DEMO_FLOW
    change_campaign_settings(campaign, {"study_flow": flow})
    platform_standin = standin.ProlificStandIn() if platform == "prolific" else standin.MTurkStandIn()
    standin.install(platform_standin)
    run = StudyRun(campaign, platform_standin)
    run.publish()
    return run


def prolific_arrives(client, run: StudyRun, participant: str) -> tuple[str, str]:
    """A participant takes a place on Prolific and opens the study link; (session, landing URL).
    The landing's check of the session runs as a worker would, the page reloading meanwhile."""
    study = run.publication.external_id
    session = run.standin.reserve(study, participant)
    params = {
        "campaign": run.campaign.pk,
        "token": publication_token(run.campaign, Worker.PROLIFIC),
        "PROLIFIC_PID": participant,
        "STUDY_ID": study,
        "SESSION_ID": session,
    }
    url = f"{reverse('labeling:platform_prolific')}?{urlencode(params)}"
    for _reload in range(5):
        response = client.get(url)
        if response.status_code != 202:
            break
        prolific_checks.run_check(session)
    assert response.status_code == 302 and "/study/" in response["Location"], response.content.decode()[:300]
    return session, url


def mturk_arrives(client, run: StudyRun, worker_id: str) -> tuple[str, str]:
    hit_id = run.standin.recruiting_hits()[0]
    assignment_id = run.standin.accept(hit_id, worker_id)
    url = mturk_landing(run.campaign, worker=worker_id, assignment=assignment_id, hit_id=hit_id)
    response = client.get(url)
    assert response.status_code == 302 and "/study/" in response["Location"], response.content.decode()[:300]
    return assignment_id, url


def step_of(response) -> str:
    return STEP.search(response.content.decode()).group(1)


def decline(client, campaign):
    return client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "decline"}, follow=True)


def fail_practice(client, campaign):
    client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "agree"})
    client.post(reverse("labeling:study_instructions", args=[campaign.pk]))
    url = reverse("labeling:study_practice", args=[campaign.pk])
    for attempt in range(2):
        for index, answer in enumerate(WRONG):
            if attempt and index == 0:
                client.get(url + "?retry=1")
            client.post(url, {"item": index, "answer": answer})
    return client.get(url)


def pass_practice(client, campaign):
    client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "agree"})
    client.post(reverse("labeling:study_instructions", args=[campaign.pk]))
    url = reverse("labeling:study_practice", args=[campaign.pk])
    for index, answer in enumerate(RIGHT):
        client.post(url, {"item": index, "answer": answer})
    return client.post(reverse("labeling:study_begin", args=[campaign.pk]))


def nothing_held_or_paid(run: StudyRun, participant: str) -> None:
    assert not Assignment.objects.filter(worker__external_id=participant).exists()  # no seat, no phantom place
    assert not PaymentEntry.objects.filter(assignment__worker__external_id=participant).exists()


# --- Prolific -----------------------------------------------------------------------------------


def test_a_prolific_participant_who_declines_is_asked_to_return_and_nothing_is_paid(platforms, client):
    run = published("prolific")
    session, _ = prolific_arrives(client, run, "5fDECLINE00000000000001")
    page = decline(client, run.campaign)
    assert step_of(page) == "declined"
    assert "Cancel participation" in page.content.decode()  # no no-consent code set up: a return
    assert "submissions/complete" not in page.content.decode()
    run.standin.return_submission(session)  # as the page asks
    run.sync()
    nothing_held_or_paid(run, "5fDECLINE00000000000001")
    assert run.standin.submissions[session].status == "RETURNED"
    assert not [p for p in run.standin.payments if p[1] == "5fDECLINE00000000000001"]


def test_a_prolific_participant_who_declines_gets_the_no_consent_code_when_one_is_set_up(platforms, client):
    run = published("prolific", prolific_no_consent_code="NOCONSENT1")
    prolific_arrives(client, run, "5fDECLINE00000000000002")
    page = decline(client, run.campaign)
    assert "https://app.prolific.com/submissions/complete?cc=NOCONSENT1" in page.content.decode()
    nothing_held_or_paid(run, "5fDECLINE00000000000002")


def test_a_prolific_participant_who_fails_the_practice_is_screened_out_without_a_seat(platforms, client):
    run = published("prolific", prolific_screen_out_code="SCREENOUT1")
    session, _ = prolific_arrives(client, run, "5fFAILS0000000000000001")
    page = fail_practice(client, run.campaign)
    assert 'id="practice-failed"' in page.content.decode()
    assert "https://app.prolific.com/submissions/complete?cc=SCREENOUT1" in page.content.decode()
    run.standin.return_submission(session)
    run.sync()
    nothing_held_or_paid(run, "5fFAILS0000000000000001")


def test_a_prolific_participant_who_passes_comes_back_through_the_landing_and_works(platforms, client):
    run = published("prolific")
    _, landing_url = prolific_arrives(client, run, "5fPASSES000000000000001")
    assert not Assignment.objects.filter(worker__external_id="5fPASSES000000000000001").exists()
    response = pass_practice(client, run.campaign)
    assert response.status_code == 302 and response["Location"] == landing_url
    work = client.get(landing_url, follow=True)
    assert step_of(work) == "work"
    assignment = Assignment.objects.get(worker__external_id="5fPASSES000000000000001")
    assert assignment.platform_assignment_id and assignment.status == Assignment.ACCEPTED


# --- MTurk --------------------------------------------------------------------------------------


def test_an_mturk_worker_who_declines_is_asked_to_return_the_hit_and_nothing_is_submitted(platforms, client):
    run = published("mturk")
    assignment_id, _ = mturk_arrives(client, run, "AMTDECLINE01")
    page = decline(client, run.campaign)
    assert step_of(page) == "declined" and "Return" in page.content.decode()
    assert "externalSubmit" not in page.content.decode()  # no form that would submit the HIT
    run.standin.return_assignment(assignment_id)
    run.sync()
    nothing_held_or_paid(run, "AMTDECLINE01")
    assert assignment_id not in run.standin.assignments


def test_an_mturk_worker_who_fails_the_practice_returns_the_hit_without_a_place(platforms, client):
    run = published("mturk")
    assignment_id, _ = mturk_arrives(client, run, "AMTFAILS001")
    page = fail_practice(client, run.campaign)
    assert 'id="practice-failed"' in page.content.decode() and "Return" in page.content.decode()
    run.standin.return_assignment(assignment_id)
    run.sync()
    nothing_held_or_paid(run, "AMTFAILS001")


def test_an_mturk_worker_who_passes_gets_their_place_through_the_landing(platforms, client):
    run = published("mturk")
    _, landing_url = mturk_arrives(client, run, "AMTPASSES01")
    response = pass_practice(client, run.campaign)
    assert response["Location"] == landing_url
    assert step_of(client.get(landing_url, follow=True)) == "work"
    assert Assignment.objects.filter(worker__external_id="AMTPASSES01", status=Assignment.ACCEPTED).count() == 1
