"""Malformed values for a campaign, through the API and the form: 400 with the field's name,
nothing saved. Also the request caps: a body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 400."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.models import Campaign

pytestmark = pytest.mark.django_db

GOOD = {"name": "Fine", "fallback_choices": ["Sad", "Angry", "Joyful"]}
BAD_FIELDS = [
    ("name", "x" * 201),
    ("name", "nul\x00byte"),
    ("reward", "-0.01"),
    ("reward", "9" * 4000),
    ("bonus", "-1"),
    ("workers_per_hit", 0),
    ("workers_per_hit", int("9" * 4000)),
    ("dialogues_per_hit", 0),
    ("dialogues_per_hit", -3),
    ("tie_break_workers", 0),
    ("time_limit_minutes", 0),
    ("estimated_minutes", 0),
    ("labels", ["No such label"]),
    ("fallback_choices", ["Sad", "Angry", "No such label"]),
]


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.mark.parametrize(("field", "value"), BAD_FIELDS)
def test_the_api_names_the_bad_field_and_saves_nothing(api, field, value):
    response = api.post("/api/campaigns/", {**GOOD, field: value}, format="json")
    assert response.status_code == 400, response.content[:200]
    assert field in response.json()
    assert not Campaign.objects.exists()


def test_a_good_campaign_still_passes(api):
    assert api.post("/api/campaigns/", GOOD, format="json").status_code == 201


FORM = {
    "name": "Form",
    "dialogues_per_hit": 15,
    "quiz_per_hit": 5,
    "workers_per_hit": 3,
    "reward": "0.40",
    "bonus": "0.10",
    "quiz_pass_mark": 3,
    "time_limit_minutes": 60,
    "fallback_choices": "Sad, Angry, Joyful",
    "tie_break_workers": 2,
    "selection": "all",
}


@pytest.mark.parametrize(
    ("field", "value"),
    [(f, v) for f, v in BAD_FIELDS if f not in ("labels", "fallback_choices") and not isinstance(v, list)]
    + [("fallback_choices", "Sad, Angry, No such label")],
)
def test_the_form_names_the_bad_field_and_saves_nothing(client, researcher, field, value):
    client.force_login(researcher)
    response = client.post(reverse("labeling:campaign_create"), {**FORM, field: str(value)})
    assert response.status_code == 200  # the form again, with the error on the field
    assert field in response.context["form"].errors
    assert not Campaign.objects.exists()


def test_a_body_over_the_cap_is_a_400(researcher, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client = Client()
    client.force_login(researcher)
    response = client.post(reverse("labeling:label_accept"), {"text": "x" * 2000})
    assert response.status_code == 400
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    response = client.post(reverse("labeling:label_accept"), {f"f{i}": "1" for i in range(10)})
    assert response.status_code == 400
