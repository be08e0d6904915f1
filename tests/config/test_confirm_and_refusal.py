"""Actions that cannot be undone ask first, without JavaScript; every refusal is one page; the
favicon is there."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from jobs.models import JobRun
from labeling.models import Assignment, Campaign, PaymentEntry
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = Campaign.objects.create(name="Confirm test", status=Campaign.OPEN)
    d = make_dialogues(2)
    make_answered_hit(campaign, make_workers(2), {d[0]: ["Sad", "Sad"], d[1]: ["Angry", "Joyful"]})
    return campaign


@pytest.fixture
def staff(client, researcher):
    client.force_login(researcher)
    return client


def reposted_fields(html: str) -> dict[str, str]:
    """The hidden fields the confirmation page's form posts again (the CSRF token aside)."""
    form = re.search(r'<form method="post" action="([^"]+)" class="inline" id="confirm-form">.*?</form>', html, re.S)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(0)))
    fields.pop("csrfmiddlewaretoken", None)
    return {"action": form.group(1), **fields}


def test_closing_a_campaign_asks_first_and_the_page_posts_the_same_fields_back(staff, campaign):
    url = reverse("labeling:campaign_status", args=[campaign.pk])
    asked = staff.post(url, {"status": "closed"})
    html = asked.content.decode()
    assert asked.status_code == 200 and "This cannot be undone." in html and "Close the campaign" in html
    campaign.refresh_from_db()
    assert campaign.status == Campaign.OPEN
    fields = reposted_fields(html)
    assert fields == {"action": url, "status": "closed", "confirm": "yes"}
    assert reverse("labeling:campaign_detail", args=[campaign.pk]) in html  # the way back
    staff.post(fields.pop("action"), fields)
    campaign.refresh_from_db()
    assert campaign.status == Campaign.CLOSED


def test_pausing_is_undone_by_opening_and_does_not_ask(staff, campaign):
    staff.post(reverse("labeling:campaign_status", args=[campaign.pk]), {"status": "paused"})
    campaign.refresh_from_db()
    assert campaign.status == Campaign.PAUSED


@pytest.mark.parametrize("name", ["campaign_approve_submitted", "campaign_record_payments", "campaign_rotate_token"])
def test_approving_paying_and_rotating_ask_first_and_change_nothing_until_confirmed(staff, campaign, name):
    token = campaign.entry_token
    statuses = sorted(Assignment.objects.values_list("status", flat=True))
    Assignment.objects.update(status=Assignment.APPROVED) if name == "campaign_record_payments" else None
    response = staff.post(reverse(f"labeling:{name}", args=[campaign.pk]))
    assert response.status_code == 200 and 'name="confirm" value="yes"' in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.entry_token == token and not PaymentEntry.objects.exists()
    if name == "campaign_approve_submitted":
        assert sorted(Assignment.objects.values_list("status", flat=True)) == statuses
    confirmed = staff.post(reverse(f"labeling:{name}", args=[campaign.pk]), {"confirm": "yes"})
    assert confirmed.status_code == 302


def test_cancelling_a_job_asks_first(staff):
    job = JobRun.objects.create(kind="gold_split", status=JobRun.QUEUED)
    url = reverse("jobs:job_cancel", args=[job.pk])
    asked = staff.post(url)
    assert "Cancel the job" in asked.content.decode()
    job.refresh_from_db()
    assert job.status == JobRun.QUEUED
    staff.post(url, {"confirm": "yes"})
    job.refresh_from_db()
    assert job.status == JobRun.CANCELLED


def test_the_job_page_cancel_button_leads_to_the_confirmation(staff):
    job = JobRun.objects.create(kind="gold_split", status=JobRun.RUNNING)
    html = staff.get(reverse("jobs:job_detail", args=[job.pk])).content.decode()
    assert f'action="{reverse("jobs:job_cancel", args=[job.pk])}"' in html


# --- one refusal page ---------------------------------------------------------------------------


def test_a_missing_page_is_the_refusal_page_with_a_404(client, settings, researcher):
    settings.DEBUG = False
    client.force_login(researcher)
    response = client.get("/labeling/campaigns/99999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'id="refusal"' in html and "Not found" in html and "favicon.svg" in html


def test_a_staff_page_refuses_an_annotator_with_the_refusal_page(client, settings, annotators):
    settings.DEBUG = False
    client.force_login(annotators[0])
    response = client.get(reverse("labeling:campaign_list"))
    assert response.status_code == 403 and 'id="refusal"' in response.content.decode()


def test_a_forged_platform_link_gets_the_refusal_page(client, campaign):
    response = client.get(reverse("labeling:platform_mturk"), {"campaign": campaign.pk, "workerId": "A1",
                                                               "assignmentId": "X", "hitId": "H", "token": "forged"})  # fmt: skip
    assert response.status_code == 403
    html = response.content.decode()
    assert 'id="refusal"' in html and "This link is not valid" in html


def test_a_failed_csrf_check_gets_the_refusal_page(researcher):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    response = client.post(reverse("labeling:campaign_status", args=[1]), {"status": "closed"})
    assert response.status_code == 403
    assert 'id="refusal"' in response.content.decode() and "expired" in response.content.decode()


def test_a_hit_past_its_time_limit_gets_the_refusal_page_with_a_410(client, annotators):
    from datetime import timedelta

    from django.utils import timezone

    from labeling.actions.claim import claim_next_hit
    from labeling.services.workers import worker_for_user
    from labeling.work.hits import build_hits
    from tests.labeling import hit_factory

    campaign = hit_factory.open_campaign(dialogues_per_hit=2, quiz_per_hit=0)
    build_hits(campaign, hit_factory.make_dialogues(2), seed=3)
    assignment = claim_next_hit(worker_for_user(annotators[0]), campaign)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    client.force_login(annotators[0])
    response = client.get(reverse("labeling:assignment_detail", args=[assignment.pk]))
    html = response.content.decode()
    assert response.status_code == 410 and 'id="refusal"' in html and "time limit" in html
    assert reverse("labeling:worker_home") in html


def test_the_refusal_templates_all_extend_one_page():
    from django.template.loader import get_template

    for name in ("400.html", "403.html", "403_csrf.html", "404.html", "registration/locked_out.html"):
        source = get_template(name).template.source
        assert source.startswith('{% extends "refusal.html" %}'), name


# --- favicon ------------------------------------------------------------------------------------


def test_the_favicon_is_linked_and_served(client, researcher):
    client.force_login(researcher)
    html = client.get("/labeling/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg"' in html
    assert finders.find("favicon.svg")
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
