"""Platform links that cannot be forged: entry tokens, landing caps, no login CSRF, one seat per item."""

from datetime import timedelta
from importlib import import_module
from urllib.parse import urlencode

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.models import Assignment, Campaign, Worker
from labeling.services.entry_tokens import publication_token
from labeling.services.workers import platform_worker, worker_for_user
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign
from tests.labeling.platform_helpers import prolific_knows, prolific_sessions
from tests.threads import run_together

__all__ = ["prolific_sessions"]
# HITs built with the built-in quiz bank; every Prolific landing is asked of Prolific (its stand-in)
pytestmark = pytest.mark.usefixtures("quiz_demo_bank", "prolific_sessions")

SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(8), seed=5)
    return campaign


def mturk_url(target: Campaign, worker: str = "A1WORKER", **overrides) -> str:
    params = {
        "campaign": target.pk,
        "hit": target.hits.first().pk,
        "assignmentId": f"3AS{worker}",
        "hitId": "3HIT0001",
        "workerId": worker,
        "turkSubmitTo": SANDBOX,
        "token": publication_token(target, Worker.MTURK),
    }
    params.update(overrides)
    return f"{reverse('labeling:platform_mturk')}?{urlencode({k: v for k, v in params.items() if v is not None})}"


def prolific_url(target: Campaign, worker: str = "P1WORKER", **overrides) -> str:
    params = {"campaign": target.pk, "PROLIFIC_PID": worker, "STUDY_ID": "S1", "SESSION_ID": "X9"}
    params["token"] = publication_token(target, Worker.PROLIFIC)
    params.update(overrides)
    if all(params.get(name) for name in ("PROLIFIC_PID", "SESSION_ID", "STUDY_ID")):
        prolific_knows(
            target, participant=params["PROLIFIC_PID"], session=params["SESSION_ID"], study=params["STUDY_ID"]
        )
    return f"{reverse('labeling:platform_prolific')}?{urlencode({k: v for k, v in params.items() if v is not None})}"


def assert_nothing_created(client: Client) -> None:
    assert not get_user_model().objects.exists()
    assert not Worker.objects.exists() and not Assignment.objects.exists()
    # no session: none stored (in the engine's table), no cookie handed out (reading client.session would make one)
    assert not import_module(django_settings.SESSION_ENGINE).SessionStore.get_model_class().objects.exists()
    assert "sessionid" not in client.cookies


# --- Entry tokens -------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "", "x" * 32], ids=["missing", "empty", "made-up"])
@pytest.mark.parametrize("link", [mturk_url, prolific_url], ids=["mturk", "prolific"])
def test_a_link_without_the_campaign_token_is_a_403_and_creates_nothing(client, campaign, link, token):
    response = client.get(link(campaign, token=token))
    assert response.status_code == 403
    assert "entry token" in response.content.decode()
    assert_nothing_created(client)


def test_another_campaigns_token_does_not_open_this_one(client, campaign):
    other = open_campaign(name="Day shift")
    assert client.get(mturk_url(campaign, token=other.entry_token)).status_code == 403
    assert_nothing_created(client)


def test_an_unknown_campaign_reads_like_a_bad_token(client, campaign):
    response = client.get(mturk_url(campaign, campaign=campaign.pk + 1000))
    assert response.status_code == 403
    assert_nothing_created(client)


def test_the_mturk_preview_needs_the_token_too(client, campaign):
    preview = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "workerId": None}
    assert client.get(mturk_url(campaign, token="wrong", **preview)).status_code == 403
    assert client.get(mturk_url(campaign, **preview)).status_code == 200
    assert_nothing_created(client)


def test_each_campaign_gets_its_own_long_random_token(db):
    tokens = {open_campaign(name=f"c{i}").entry_token for i in range(5)}
    assert len(tokens) == 5 and all(len(token) >= 32 for token in tokens)


def test_rotating_the_token_retires_every_link_handed_out(client, campaign, researcher):
    old_link = mturk_url(campaign)
    client.force_login(researcher)
    response = client.post(reverse("labeling:campaign_rotate_token", args=[campaign.pk]), {"confirm": "yes"})
    assert response.status_code == 302
    client.logout()
    campaign.refresh_from_db()
    assert client.get(old_link).status_code == 403
    assert not Worker.objects.exists()
    assert client.get(mturk_url(campaign)).status_code == 302  # the new link works


def test_only_staff_rotate_the_token(client, campaign, annotators):
    before = campaign.entry_token
    url = reverse("labeling:campaign_rotate_token", args=[campaign.pk])
    assert client.post(url).status_code == 302  # to the login page
    client.force_login(annotators[0])
    assert client.post(url).status_code == 403
    campaign.refresh_from_db()
    assert campaign.entry_token == before


def test_the_campaign_page_shows_both_links_with_the_token(client, campaign, researcher):
    client.force_login(researcher)
    html = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    # each platform's link carries its own publication token, never the campaign's secret itself
    mturk, prolific = (publication_token(campaign, platform) for platform in (Worker.MTURK, Worker.PROLIFIC))
    assert f"/labeling/platform/mturk/?campaign={campaign.pk}&amp;token={mturk}" in html
    assert f"/labeling/platform/prolific/?campaign={campaign.pk}&amp;token={prolific}" in html
    assert campaign.entry_token not in html.replace(mturk, "").replace(prolific, "")
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in html


# --- Landing caps -------------------------------------------------------------------------------


def land_as(worker: str, campaign: Campaign, ip: str = "203.0.113.7") -> int:
    return Client(REMOTE_ADDR=ip).get(mturk_url(campaign, worker)).status_code


def test_new_workers_per_ip_are_capped_and_the_refusal_creates_nothing(campaign, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 2
    assert [land_as("W1", campaign), land_as("W2", campaign)] == [302, 302]
    response = Client(REMOTE_ADDR="203.0.113.7").get(mturk_url(campaign, "W3"))
    assert response.status_code == 429
    assert "2 new workers" in response.content.decode()
    assert set(Worker.objects.values_list("external_id", flat=True)) == {"W1", "W2"}
    assert not get_user_model().objects.filter(username="mturk-W3").exists()
    assert land_as("W1", campaign) == 302  # a known worker comes back freely
    assert land_as("W3", campaign, ip="198.51.100.9") == 302  # another address has its own count


def test_the_ip_cap_counts_the_live_work_an_address_holds(campaign, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 1
    assert land_as("W1", campaign) == 302
    assert land_as("W2", campaign) == 429
    Worker.objects.update(created_at=timezone.now() - timedelta(minutes=61))
    assert land_as("W2", campaign) == 429  # an hour on, W1 still holds its seat: it still counts
    Assignment.objects.update(expires_at=timezone.now() - timedelta(seconds=1))  # its time limit passed
    assert land_as("W2", campaign) == 302


def test_new_workers_per_campaign_are_capped(campaign, settings):
    settings.PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR = 2
    codes = [land_as(f"W{i}", campaign, ip=f"198.51.100.{i}") for i in range(3)]
    assert codes == [302, 302, 429]
    assert Worker.objects.count() == 2


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_landings_racing_past_the_cap_create_no_more_than_it(settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 3
    target = open_campaign()
    results = run_together(
        8,
        lambda index: platform_worker(
            Worker.MTURK, f"RACE{index}", landing_key="3AS", campaign=target, ip="203.0.113.7"
        ),
    )
    assert sum(isinstance(result, Worker) for result in results) == 3, results
    assert Worker.objects.count() == 3 and get_user_model().objects.count() == 3


# --- No login CSRF ------------------------------------------------------------------------------


def test_a_link_never_switches_a_signed_in_browser_by_itself(client, campaign, annotators):
    client.force_login(annotators[0])
    response = client.get(mturk_url(campaign))
    assert response.status_code == 200
    assert 'name="confirm" value="switch"' in response.content.decode()
    assert client.session["_auth_user_id"] == str(annotators[0].pk)
    assert not Worker.objects.filter(platform=Worker.MTURK).exists()


def test_a_staff_browser_is_asked_too_and_stays_staff(client, campaign, researcher):
    client.force_login(researcher)
    assert client.get(prolific_url(campaign)).status_code == 200
    assert client.session["_auth_user_id"] == str(researcher.pk)


def test_a_forged_cross_site_confirmation_is_refused(campaign, annotators):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(annotators[0])
    response = browser.post(mturk_url(campaign), {"confirm": "switch"})
    assert response.status_code == 403  # no CSRF token: another site cannot confirm for the victim
    assert browser.session["_auth_user_id"] == str(annotators[0].pk)
    assert not Worker.objects.filter(platform=Worker.MTURK).exists()


def test_the_confirmation_from_our_page_switches(campaign, annotators):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(annotators[0])
    page = browser.get(mturk_url(campaign))
    token = page.content.decode().split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    response = browser.post(mturk_url(campaign), {"confirm": "switch", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    worker = Worker.objects.get(platform=Worker.MTURK)
    assert browser.session["_auth_user_id"] == str(worker.user_id)


def test_the_same_worker_coming_back_is_not_asked(client, campaign):
    assert client.get(mturk_url(campaign)).status_code == 302
    assert client.get(mturk_url(campaign)).status_code == 302


# --- Seats --------------------------------------------------------------------------------------


def test_a_worker_never_holds_two_seats_of_the_same_dialogue(db, annotators):
    target = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    dialogues = make_dialogues(2)
    first, second = build_hits(target, dialogues, seed=1) + build_hits(target, dialogues, seed=2)
    worker = worker_for_user(annotators[0])
    assignment = claim_next_hit(worker, target)
    assert assignment.hit == first
    answer_everything(assignment)
    submit_assignment(assignment)
    assert claim_next_hit(worker, target) is None  # the second HIT repeats both dialogues
    other = claim_next_hit(worker_for_user(annotators[1]), target)
    assert other is not None and other.hit == first
    assert second.pk != first.pk


def test_an_expired_seat_does_not_block_the_same_dialogue_elsewhere(db, annotators):
    target = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    dialogues = make_dialogues(2)
    first, second = build_hits(target, dialogues, seed=1) + build_hits(target, dialogues, seed=2)
    worker = worker_for_user(annotators[0])
    assignment = claim_next_hit(worker, target)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert claim_next_hit(worker, target).hit == second


def test_a_worker_holds_one_open_assignment_at_a_time(db, annotators):
    target = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(target, make_dialogues(6), seed=1)
    worker = worker_for_user(annotators[0])
    first = claim_next_hit(worker, target)
    assert claim_next_hit(worker, target) == first
    assert Assignment.objects.filter(worker=worker, status=Assignment.ACCEPTED).count() == 1


# --- A known worker id alone does not take over a worker's HIT ----------------------------------


def test_the_hit_is_bound_to_the_platform_assignment_that_opened_it(campaign):
    owner = Client()
    assert owner.get(mturk_url(campaign, assignmentId="3ASREAL")).status_code == 302
    assignment = Assignment.objects.get()
    assert assignment.platform_assignment_id == "3ASREAL"
    intruder = Client()  # knows the worker id and a link's token, not MTurk's assignment id
    response = intruder.get(mturk_url(campaign, assignmentId="3ASGUESS"))
    # an identity of its own: never the owner's account, never the owner's HIT
    taken = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.status_code == 302 and taken.worker != assignment.worker
    assert intruder.session["_auth_user_id"] != owner.session["_auth_user_id"]
    assert Client().get(mturk_url(campaign, assignmentId="3ASREAL")).status_code == 302  # the owner, again
    assert Assignment.objects.count() == 2


def test_a_prolific_hit_is_bound_to_its_session_id(campaign):
    assert Client().get(prolific_url(campaign, SESSION_ID="SESS1")).status_code == 302
    assert Assignment.objects.get().platform_assignment_id == "SESS1"
    assert Client().get(prolific_url(campaign, SESSION_ID="SESS2")).status_code == 302
    sessions = Assignment.objects.values_list("platform_assignment_id", "worker__landing_key")
    assert sorted(sessions) == [("SESS1", "SESS1"), ("SESS2", "SESS2")]


def test_a_client_cannot_dodge_the_ip_cap_with_a_forwarded_header(campaign, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 1
    spoofing = {"REMOTE_ADDR": "203.0.113.7"}
    assert Client(**spoofing, HTTP_X_FORWARDED_FOR="10.0.0.1").get(mturk_url(campaign, "W1")).status_code == 302
    assert Client(**spoofing, HTTP_X_FORWARDED_FOR="10.0.0.2").get(mturk_url(campaign, "W2")).status_code == 429


def test_behind_our_proxy_the_address_it_appends_is_counted(campaign, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 1
    settings.TRUST_X_FORWARDED_FOR = True
    proxy = {"REMOTE_ADDR": "10.0.0.254"}
    first = Client(**proxy, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.1")
    assert first.get(mturk_url(campaign, "W1")).status_code == 302
    assert Worker.objects.get().signup_ip == "198.51.100.1"
    assert Client(**proxy, HTTP_X_FORWARDED_FOR="198.51.100.2").get(mturk_url(campaign, "W2")).status_code == 302
    # a forged first entry does not make a new address
    assert (
        Client(**proxy, HTTP_X_FORWARDED_FOR="9.9.9.9, 198.51.100.2").get(mturk_url(campaign, "W3")).status_code == 429
    )
