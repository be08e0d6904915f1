"""Watching the anchor: how often workers leave the three suggestions for "Other" and how often the
top-1 suggestion wins, live on the campaign dashboard, with the weak-suggester warning."""

import pytest
from django.urls import reverse

from annotation.models import ModelVersion
from labeling.models import Campaign
from labeling.reports.campaign import campaign_report
from labeling.work.hits import record_suggestion_model
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    """Every dialogue screen offers Angry, Sad, Joyful, ranked in that order by the suggester."""
    campaign = Campaign.objects.create(name="Anchor test")
    d = make_dialogues(3)
    make_answered_hit(
        campaign,
        make_workers(3),
        {
            d[0]: ["Angry", "Angry", "Furious"],  # top-1 twice; Furious from the full list ("Other")
            d[1]: ["Forgetful", "forgetful", "Sad"],  # typed twice ("Other"); the 2nd suggestion
            d[2]: ["Sad", "Joyful", "Proud"],  # 2nd, 3rd, Proud from the list ("Other")
        },
        quiz_answers=[["Sad", "Sad", "Angry"]],  # quiz screens put the answer among the choices: not counted
    )
    return campaign


def test_the_report_counts_other_and_top1_from_the_stored_ranked_choices(campaign, settings):
    settings.SUGGESTER_WARN_MIN_ANSWERS = 30
    figures = campaign_report(campaign)["suggestions"]
    assert figures["answers"] == 9 and figures["through_other"] == 4
    assert figures["other_rate"] == round(4 / 9, 4)
    assert figures["ranked_answers"] == 9
    assert figures["top1"] == 2 and figures["top1_rate"] == round(2 / 9, 4)
    assert figures["by_rank"] == {"1": 2, "2": 2, "3": 1}
    assert figures["model_version"] is None
    assert figures["weak"] is False  # 9 answers: under the minimum of 30, no verdict yet


@pytest.mark.parametrize(("rate", "warned"), [(0.4, True), (0.45, False)])
def test_it_warns_over_the_configured_other_rate(client, researcher, campaign, settings, rate, warned):
    settings.SUGGESTER_OTHER_WARN_RATE = rate  # 4/9 = 0.444 left the suggestions
    settings.SUGGESTER_WARN_MIN_ANSWERS = 5
    assert campaign_report(campaign)["suggestions"]["weak"] is warned
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    assert ('id="suggester-warning"' in page) is warned
    assert "44 %" in page and "4 of 9 dialogue answers" in page  # left for "Other"
    assert "22 %" in page and "2 of 9 answers; 2nd 2, 3rd 1" in page  # top-1 chosen


def test_the_campaign_page_names_its_suggestion_model_and_refreshes_the_figures(client, researcher, campaign):
    version = ModelVersion.objects.create(kind=ModelVersion.SUGGESTER, name="gold suggester", base_model="minilm")
    record_suggestion_model(campaign, version)
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert "gold suggester" in page and reverse("mlworkers:model_version_detail", args=[version.pk]) in page
    assert 'hx-trigger="load, every 30s"' in page  # live: the figures reload while the page is open
    report = client.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    assert f"#{version.pk}" in report
    assert campaign_report(campaign)["suggestions"]["model_version"]["id"] == version.pk
