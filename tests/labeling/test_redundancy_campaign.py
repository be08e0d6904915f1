"""A campaign's redundancy policy: its settings refused with the field named on the form and the
API, and the campaign page's answers saved against what the fixed policy would have bought."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.crowd.redundancy import RedundancyPolicy, first_seats, setting_errors
from labeling.models import Campaign
from labeling.work.policy import answers_bought
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db

FORM = {
    "name": "Policy",
    "dialogues_per_hit": 2,
    "quiz_per_hit": 0,
    "workers_per_hit": 3,
    "reward": "0.40",
    "bonus": "0.10",
    "quiz_pass_mark": 0,
    "time_limit_minutes": 30,
    "fallback_choices": "Neutral, Questioning, Acknowledging",
    "tie_break_workers": 2,
    "selection": "all",
}


def _api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def test_it_refuses_model_informed_without_a_threshold_in_the_pure_check():
    assert "model_threshold" in setting_errors("model_informed", 3, None)
    assert setting_errors("model_informed", 3, 0.9) == {}
    assert setting_errors("until_agreement", 3, None) == {}
    assert "redundancy_cap" in setting_errors("until_agreement", 1, None)
    assert "redundancy_policy" in setting_errors("majority_of_one", 3, None)


def test_first_seats_follow_the_policy_and_the_models_confidence():
    assert first_seats(RedundancyPolicy("fixed", workers=3)) == 3
    assert first_seats(RedundancyPolicy("until_agreement")) == 2
    informed = RedundancyPolicy("model_informed", threshold=0.9)
    assert (first_seats(informed, 0.95), first_seats(informed, 0.89), first_seats(informed, None)) == (1, 2, 2)


def test_it_refuses_model_informed_without_a_threshold_on_the_api(researcher):
    response = _api(researcher).post(
        "/api/campaigns/", {"name": "x", "redundancy_policy": "model_informed"}, format="json"
    )
    assert response.status_code == 400 and "model_threshold" in response.data
    assert not Campaign.objects.filter(name="x").exists()


def test_it_refuses_a_threshold_outside_0_1_and_a_cap_under_2_on_the_api(researcher):
    client = _api(researcher)
    bad_threshold = {"name": "x", "redundancy_policy": "model_informed", "model_threshold": 1.5}
    response = client.post("/api/campaigns/", bad_threshold, format="json")
    assert response.status_code == 400 and "model_threshold" in response.data
    response = client.post("/api/campaigns/", {"name": "x", "redundancy_cap": 1}, format="json")
    assert response.status_code == 400 and "redundancy_cap" in response.data
    response = client.post("/api/campaigns/", {"name": "x", "redundancy_policy": "sometimes"}, format="json")
    assert response.status_code == 400 and "redundancy_policy" in response.data


def test_the_api_creates_and_reads_a_policy(researcher):
    settings = {"name": "p", "redundancy_policy": "model_informed", "model_threshold": 0.8, "redundancy_cap": 5}
    response = _api(researcher).post("/api/campaigns/", settings, format="json")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(name="p")
    assert (campaign.redundancy_policy, campaign.model_threshold, campaign.redundancy_cap) == ("model_informed", 0.8, 5)
    assert response.data["redundancy_policy"] == "model_informed"


def test_the_form_refuses_model_informed_without_a_threshold(client: Client, researcher):
    client.force_login(researcher)
    response = client.post(reverse("labeling:campaign_create"), {**FORM, "redundancy_policy": "model_informed"})
    assert response.status_code == 200
    assert "model_informed needs" in response.content.decode()
    assert not Campaign.objects.filter(name="Policy").exists()


def test_the_form_saves_a_policy_and_defaults_to_fixed(client: Client, researcher):
    client.force_login(researcher)
    make_dialogues(2, prefix="form")
    client.post(reverse("labeling:campaign_create"), FORM)
    assert Campaign.objects.get(name="Policy").redundancy_policy == "fixed"
    chosen = {**FORM, "name": "Agree", "redundancy_policy": "until_agreement", "redundancy_cap": 5}
    response = client.post(reverse("labeling:campaign_create"), chosen)
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="Agree")
    assert (campaign.redundancy_policy, campaign.redundancy_cap) == ("until_agreement", 5)


def test_the_campaign_page_shows_answers_saved_against_fixed(client: Client, researcher):
    campaign = Campaign.objects.create(name="Saved", redundancy_policy="until_agreement", workers_per_hit=3)
    d = make_dialogues(3)
    make_answered_hit(campaign, make_workers(2), {d[0]: ["Sad", "Sad"], d[1]: ["Sad", "Sad"], d[2]: ["Sad", "Angry"]})
    bought = answers_bought(campaign)
    assert (bought["answers"], bought["items"], bought["fixed_answers"]) == (6, 3, 9)
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert "answers saved <strong>6</strong> for 3 answered items (of 3)" in page
    assert "would buy 9" in page
