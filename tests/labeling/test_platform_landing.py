"""Crowd-platform workers arriving from MTurk and Prolific, and handing their result back."""

import re
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.urls import reverse

from labeling.actions.submit import submit_assignment
from labeling.models import Assignment, Campaign, Worker
from labeling.platforms import hit_url
from labeling.services.entry_tokens import publication_token
from labeling.services.workers import platform_worker
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import (
    answer_everything,
    make_dialogues,
    open_campaign,
)
from tests.labeling.platform_helpers import prolific_knows, prolific_sessions
from tests.threads import run_together

__all__ = ["prolific_sessions"]
# HITs built with the built-in quiz bank; every Prolific landing is asked of Prolific (its stand-in)
pytestmark = pytest.mark.usefixtures("quiz_demo_bank", "prolific_sessions")

SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, description="Label feelings in film talk.")
    build_hits(campaign, make_dialogues(4), seed=5)
    return campaign


def mturk_url(target: Campaign, **overrides) -> str:
    params = {
        "campaign": target.pk,
        "hit": target.hits.first().pk,
        "assignmentId": "3ASSIGN0001",
        "hitId": "3HIT0001",
        "workerId": "A1WORKER",
        "turkSubmitTo": SANDBOX,
        "token": publication_token(target, Worker.MTURK),
    }
    params.update(overrides)
    return f"{reverse('labeling:platform_mturk')}?{urlencode(params)}"


def prolific_url(target: Campaign, **overrides) -> str:
    params = {
        "campaign": target.pk,
        "PROLIFIC_PID": "5f1e2d3c4b5a69788796a5b4",
        "STUDY_ID": "S1",
        "SESSION_ID": "X9",
        "token": publication_token(target, Worker.PROLIFIC),
    }
    params.update(overrides)
    known = {"participant": params["PROLIFIC_PID"], "session": params["SESSION_ID"], "study": params["STUDY_ID"]}
    prolific_knows(target, **known)
    return f"{reverse('labeling:platform_prolific')}?{urlencode(params)}"


def landed_assignment(response) -> Assignment:
    assert response.status_code == 302, response.content.decode()[:500]
    assignment = Assignment.objects.get()
    assert response["Location"] == reverse("labeling:assignment_detail", args=[assignment.pk])
    return assignment


def submit_it(assignment: Assignment) -> None:
    answer_everything(assignment)
    submit_assignment(assignment)


# --- MTurk landing ------------------------------------------------------------------------------


def test_the_published_hit_url_is_the_mturk_landing(campaign):
    hit = campaign.hits.first()
    url = hit_url("https://site.example/", hit)
    assert url == (
        f"https://site.example/labeling/platform/mturk/?campaign={campaign.pk}&hit={hit.pk}"
        f"&token={publication_token(campaign, Worker.MTURK)}"
    )


def test_the_preview_describes_the_task_and_claims_nothing(client, campaign):
    response = client.get(mturk_url(campaign, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", workerId=""))
    assert response.status_code == 200
    assert "Label feelings in film talk." in response.content.decode()
    assert "X-Frame-Options" not in response  # MTurk shows it in a frame
    assert not Assignment.objects.exists() and not Worker.objects.exists()
    assert not get_user_model().objects.exists()
    assert "_auth_user_id" not in client.session


def test_landing_creates_the_worker_and_account_signs_in_and_claims(client, campaign):
    response = client.get(mturk_url(campaign))
    assignment = landed_assignment(response)
    worker = Worker.objects.get(platform=Worker.MTURK, external_id="A1WORKER")
    assert assignment.worker == worker and assignment.hit.campaign == campaign
    user = worker.user
    assert user.username == "mturk-A1WORKER-3ASSIGN0001"  # one account per landing (worker and work id)
    assert worker.landing_key == "3ASSIGN0001" and worker.is_pending_identity
    assert not user.has_usable_password() and not user.is_staff and not user.is_superuser
    assert client.session["_auth_user_id"] == str(user.pk)
    assert client.session["platform_return"] == {
        "kind": "mturk",
        "platform": "MTurk",
        "submit_url": f"{SANDBOX}/mturk/externalSubmit",
        "external_assignment": "3ASSIGN0001",
        "assignment": assignment.pk,
    }
    # the annotator pages now serve this worker their HIT
    assert client.get(response["Location"], follow=True).status_code == 200


def test_a_second_landing_reuses_the_worker_account_and_live_assignment(client, campaign):
    first = landed_assignment(client.get(mturk_url(campaign)))
    client.logout()
    second = landed_assignment(client.get(mturk_url(campaign)))
    assert first == second
    assert Worker.objects.count() == 1 and get_user_model().objects.count() == 1


def test_a_known_worker_id_lands_as_a_new_identity_not_as_the_known_worker(client, campaign):
    worker = Worker.objects.create(platform=Worker.MTURK, external_id="A1WORKER")
    assignment = landed_assignment(client.get(mturk_url(campaign)))
    worker.refresh_from_db()
    assert worker.user is None and assignment.worker != worker
    assert assignment.worker.user.username == "mturk-A1WORKER-3ASSIGN0001"


def test_landing_inside_the_mturk_frame_offers_its_own_window(client, campaign):
    response = client.get(mturk_url(campaign), HTTP_SEC_FETCH_DEST="iframe")
    assert response.status_code == 200
    assert 'target="_blank"' in response.content.decode()
    assert not Assignment.objects.exists()


@pytest.mark.parametrize(
    "overrides",
    [
        {"workerId": ""},
        {"workerId": "A1<script>"},
        {"workerId": "A" * 65},
        {"assignmentId": "3ASSIGN 0001"},
        {"hitId": "../x"},
        {"campaign": "one"},
        {"hit": "2;drop"},
    ],
)
def test_malformed_platform_ids_are_a_400_naming_the_parameter(client, campaign, overrides):
    response = client.get(mturk_url(campaign, **overrides))
    assert response.status_code == 400
    assert next(iter(overrides)) in response.content.decode()
    assert not Worker.objects.exists() and not get_user_model().objects.exists()


@pytest.mark.parametrize(
    "submit_to",
    ["", "http://workersandbox.mturk.com", "https://evil.example", "https://www.mturk.com.evil.example"],
)
def test_a_turk_submit_to_other_than_mturk_is_a_400(client, campaign, submit_to):
    response = client.get(mturk_url(campaign, turkSubmitTo=submit_to))
    assert response.status_code == 400
    assert "turkSubmitTo" in response.content.decode()
    assert not Assignment.objects.exists()


def test_the_production_submit_host_is_accepted(client, campaign):
    landed_assignment(client.get(mturk_url(campaign, turkSubmitTo="https://www.mturk.com/")))
    assert client.session["platform_return"]["submit_url"] == "https://www.mturk.com/mturk/externalSubmit"


def test_a_blocked_worker_is_refused(client, campaign):
    Worker.objects.create(platform=Worker.MTURK, external_id="A1WORKER", status=Worker.BLOCKED)
    response = client.get(mturk_url(campaign))
    assert response.status_code == 403
    assert "blocked" in response.content.decode()
    assert not Assignment.objects.exists()
    assert "_auth_user_id" not in client.session


def test_a_blocked_worker_gets_no_account(client, campaign):
    Worker.objects.create(platform=Worker.MTURK, external_id="A1WORKER", status=Worker.BLOCKED)
    client.get(mturk_url(campaign))
    assert Worker.objects.get().user is None and not get_user_model().objects.exists()


def test_a_session_of_another_campaign_opens_nothing_here(client, campaign):
    # (was: the other campaign's live HIT came first; a landing's identity is now bound to the
    # campaign of the link it came by, so the same platform work on another link gets nothing)
    other = open_campaign(name="Day shift", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(other, make_dialogues(2, prefix="o"), seed=2)
    first = landed_assignment(client.get(mturk_url(other)))
    response = client.get(mturk_url(campaign))
    assert response.status_code == 409
    assert "another study" in response.content.decode()
    assert Assignment.objects.get() == first and first.hit.campaign == other


def test_another_platform_assignment_is_an_identity_of_its_own(client, campaign):
    first = landed_assignment(client.get(mturk_url(campaign)))
    # mid-HIT, another assignment id of the same worker id asks first (no silent switch) ...
    response = client.get(mturk_url(campaign, assignmentId="3ASSIGN0002"))
    assert response.status_code == 200 and Assignment.objects.count() == 1
    # ... once the HIT is done, the next HIT in the same browser needs no "switch accounts?"
    submit_it(first)
    response = client.get(mturk_url(campaign, assignmentId="3ASSIGN0002"))
    assert response.status_code == 302
    second = Assignment.objects.exclude(pk=first.pk).get()
    assert second.worker != first.worker and second.platform_assignment_id == "3ASSIGN0002"


def test_a_campaign_that_is_not_open_says_so(client, campaign):
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.PAUSED)
    response = client.get(mturk_url(campaign))
    assert response.status_code == 409
    assert "not open" in response.content.decode()
    assert not Worker.objects.exists()


def test_a_worker_linked_to_a_staff_account_is_never_signed_in(client, campaign, researcher):
    researcher.is_staff = True
    researcher.set_unusable_password()  # staff rights alone must refuse it
    researcher.save()
    Worker.objects.create(platform=Worker.MTURK, external_id="A1WORKER", landing_key="3ASSIGN0001", user=researcher)
    response = client.get(mturk_url(campaign))
    assert response.status_code == 409
    assert "_auth_user_id" not in client.session and not Assignment.objects.exists()


def test_a_worker_linked_to_a_password_account_is_never_signed_in(client, campaign, annotators):
    Worker.objects.create(platform=Worker.MTURK, external_id="A1WORKER", landing_key="3ASSIGN0001", user=annotators[0])
    response = client.get(mturk_url(campaign))
    assert response.status_code == 409
    assert "_auth_user_id" not in client.session and not Assignment.objects.exists()


def test_a_taken_account_name_is_not_taken_over(client, campaign, django_user_model):
    django_user_model.objects.create_user("mturk-A1WORKER-3ASSIGN0001", password="site-password")
    response = client.get(mturk_url(campaign))
    assert response.status_code == 409
    assert "_auth_user_id" not in client.session
    assert not Worker.objects.exists()  # nothing half-saved


# --- Returning the result -----------------------------------------------------------------------


def test_the_return_page_posts_the_assignment_to_the_remembered_mturk_url(client, campaign):
    assignment = landed_assignment(client.get(mturk_url(campaign)))
    submit_it(assignment)
    assignment.refresh_from_db()
    response = client.get(reverse("labeling:platform_return", args=[assignment.pk]))
    assert response.status_code == 200
    html = re.search(r'<form id="platform-return".*?</form>', response.content.decode(), re.S).group(0)
    assert f'action="{SANDBOX}/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="3ASSIGN0001"' in html
    assert f'name="completion_code" value="{assignment.completion_code}"' in html
    assert "csrfmiddlewaretoken" not in html  # our token never goes to another site
    assert 'getElementById("platform-return").submit()' in response.content.decode()


def test_the_done_page_links_to_the_return(client, campaign):
    assignment = landed_assignment(client.get(mturk_url(campaign)))
    submit_it(assignment)
    html = client.get(reverse("labeling:assignment_done", args=[assignment.pk])).content.decode()
    assert reverse("labeling:platform_return", args=[assignment.pk]) in html
    assert "Return to MTurk" in html


def test_the_return_waits_for_the_submission(client, campaign):
    assignment = landed_assignment(client.get(mturk_url(campaign)))
    response = client.get(reverse("labeling:platform_return", args=[assignment.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("labeling:assignment_detail", args=[assignment.pk])


def test_another_workers_assignment_has_no_return(client, campaign):
    assignment = landed_assignment(client.get(mturk_url(campaign)))
    submit_it(assignment)
    url = reverse("labeling:platform_return", args=[assignment.pk])
    client.logout()
    assert client.get(url).status_code == 404  # anonymous
    other = client.get(mturk_url(campaign, workerId="B2OTHER", assignmentId="3ASSIGN0002"))
    assert other.status_code == 302
    assert client.get(url).status_code == 404


def test_a_site_assignment_has_no_platform_return(client, campaign, annotators):
    from labeling.actions.claim import claim_next_hit
    from labeling.services.workers import worker_for_user

    client.force_login(annotators[0])
    assignment = claim_next_hit(worker_for_user(annotators[0]), campaign)
    submit_it(assignment)
    assert client.get(reverse("labeling:platform_return", args=[assignment.pk])).status_code == 404
    html = client.get(reverse("labeling:assignment_done", args=[assignment.pk])).content.decode()
    assert "Return to" not in html


# --- Prolific -----------------------------------------------------------------------------------


def test_prolific_landing_signs_in_claims_and_returns_the_code(client, campaign):
    assignment = landed_assignment(client.get(prolific_url(campaign)))
    worker = Worker.objects.exclude(landing_key="").get(platform=Worker.PROLIFIC)
    assert worker.merged_into is not None  # Prolific stood behind the session at once
    assert worker.external_id == "5f1e2d3c4b5a69788796a5b4"
    assert worker.user.username == "prolific-5f1e2d3c4b5a69788796a5b4-X9" and not worker.user.is_staff
    assert client.session["platform_return"]["study"] == "S1"
    submit_it(assignment)
    assignment.refresh_from_db()
    html = client.get(reverse("labeling:platform_return", args=[assignment.pk])).content.decode()
    assert assignment.completion_code and assignment.completion_code in html
    assert f"https://app.prolific.com/submissions/complete?cc={assignment.completion_code}" in html


def test_prolific_landing_validates_its_ids(client, campaign):
    response = client.get(prolific_url(campaign, STUDY_ID="x y"))
    assert response.status_code == 400
    assert "STUDY_ID" in response.content.decode()
    assert not Worker.objects.exists()


def test_the_same_id_on_two_platforms_is_two_workers(client, campaign):
    landed_assignment(client.get(prolific_url(campaign, PROLIFIC_PID="A1WORKER")))
    client.logout()
    client.get(mturk_url(campaign))
    assert Worker.objects.filter(external_id="A1WORKER").exclude(landing_key="").count() == 2
    assert set(get_user_model().objects.values_list("username", flat=True)) == {
        "mturk-A1WORKER-3ASSIGN0001",
        "prolific-A1WORKER-X9",
    }


# --- Concurrency (PostgreSQL) -------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("known_worker", [False, True], ids=["new-worker", "worker-without-account"])
def test_tabs_landing_at_once_make_one_worker_and_one_account(known_worker):
    if known_worker:
        Worker.objects.create(platform=Worker.MTURK, external_id="A1RACE", landing_key="3AS")
    results = run_together(
        6, lambda _index: platform_worker(Worker.MTURK, "A1RACE", landing_key="3AS", ip="192.0.2.1").user_id
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    assert len(set(results)) == 1
    assert Worker.objects.filter(external_id="A1RACE").count() == 1
    assert get_user_model().objects.filter(username="mturk-A1RACE-3AS").count() == 1
