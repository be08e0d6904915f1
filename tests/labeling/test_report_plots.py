"""The dashboard's charts come from the report's own numbers, and the report partial draws them."""

import pytest
from django.urls import reverse

from labeling.models import Campaign
from labeling.reports.plots import report_plots
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

REPORT = {
    "labels": [
        {"label": "Sad", "items": 3, "majority": 2, "majority_rate": 0.6667},
        {"label": "Angry", "items": 2, "majority": 0, "majority_rate": 0.0},
        {"label": "Joyful", "items": 1, "majority": 1, "majority_rate": 1.0},
    ],
    "workers": [
        {"worker": "w1", "median_seconds": 6.0, "agreement_with_majority": 0.8, "quiz_accuracy": 0.5,
         "too_fast": False, "status": "active"},
        {"worker": "w2", "median_seconds": 0.9, "agreement_with_majority": None, "quiz_accuracy": 0.25,
         "too_fast": True, "status": "active"},
        {"worker": "w3", "median_seconds": None, "agreement_with_majority": 1.0, "quiz_accuracy": None,
         "too_fast": False, "status": "active"},
    ],
}  # fmt: skip


def test_the_charts_show_majorities_agreement_and_workers():
    plots = report_plots(REPORT)
    assert [(b.label, b.text) for b in plots["label_distribution"].bars] == [("Sad", "2"), ("Joyful", "1")]
    agreement = plots["agreement_per_label"].bars
    assert [(b.label, b.text) for b in agreement] == [("Sad", "0.67"), ("Angry", "0.00"), ("Joyful", "1.00")]
    points = {p.label: p for p in plots["worker_accuracy"].points}
    assert set(points) == {"w1", "w2"}  # w3 has no timing
    assert points["w2"].y == 0.25 and points["w2"].flagged  # quiz accuracy where no agreement; too fast
    assert points["w1"].y == 0.8 and not points["w1"].flagged


@pytest.mark.django_db
def test_the_report_partial_draws_the_three_charts(client, researcher):
    campaign = Campaign.objects.create(name="Plots")
    d = make_dialogues(2)
    make_answered_hit(campaign, make_workers(3), {d[0]: ["Sad", "Sad", "Angry"], d[1]: ["Joyful"] * 3})
    client.force_login(researcher)
    html = client.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    for chart in ("plot-label-distribution", "plot-agreement-per-label", "plot-worker-accuracy"):
        assert f'id="{chart}"' in html
    assert html.count('<g class="bar">') == 2 + 3  # two majority labels; three labels answered
    assert html.count('<g class="point">') == 3
    assert 'role="img"' in html and "<script" not in html.split('id="plot-label-distribution"')[1][:3000]
