"""A campaign shows only dialogues in its language (identified at ingest; unidentified ones pass)."""

import pytest
from rest_framework.test import APIClient

from annotation.models import Dialogue
from labeling.models import Campaign, HITItem
from labeling.pages.forms import candidate_dialogues
from tests.labeling.crowd_factories import make_dialogues

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank


@pytest.fixture
def mixed(db):
    dialogues = make_dialogues(6, prefix="lang")
    languages = ["en", "en", "fr", "fr", "", "de"]
    for dialogue, language in zip(dialogues, languages, strict=True):
        Dialogue.objects.filter(pk=dialogue.pk).update(language=language)
    return dict(zip(range(6), [d.pk for d in dialogues], strict=True))


def test_candidates_keep_the_language_and_the_unidentified(mixed):
    assert set(candidate_dialogues("en").values_list("pk", flat=True)) == {mixed[0], mixed[1], mixed[4]}
    assert set(candidate_dialogues("fr").values_list("pk", flat=True)) == {mixed[2], mixed[3], mixed[4]}
    assert candidate_dialogues().count() == 6  # no language: no filter


def test_a_french_campaign_from_the_api_gets_only_french_dialogues(mixed, researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post(
        "/api/campaigns/",
        {
            "name": "En français",
            "language": "fr",
            "dialogues_per_hit": 2,
            "quiz_per_hit": 1,
            "fallback_choices": ["Neutral", "Questioning", "Acknowledging"],
            "recent_dialogues": 6,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(pk=response.data["id"])
    assert campaign.language == "fr"
    items = HITItem.objects.filter(hit__campaign=campaign, dialogue__isnull=False)
    assert set(items.values_list("dialogue_id", flat=True)) == {mixed[2], mixed[3], mixed[4]}
