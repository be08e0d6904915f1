"""The crowd figures as they happened: hourly pay from the unrounded median time, Dawid-Skene's
"gold changed" only on items humans answered, the fixed policy's answers only for answered items;
and a campaign's provenance, set by the creation path and the importer."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import Label
from labeling.models import HIT, Assignment, Campaign, HITItem, RaterAnswer
from labeling.reports.study import build_report
from labeling.reports.study.crowd import crowd_figures
from labeling.reports.study.figures import dialogue_answers
from labeling.reports.study.provenance import campaign_provenance
from labeling.services.campaigns import CampaignRefused, create_campaign
from labeling.work.policy import answers_bought
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers


@pytest.fixture
def quick(db):
    """One HIT of two dialogues answered by three workers in 19, 20 and 21 seconds, and a second HIT
    whose dialogue nobody answered."""
    campaign = Campaign.objects.create(name="Quick", reward=Decimal("1.00"), bonus=0, workers_per_hit=3)
    workers = make_workers(3)
    d = make_dialogues(3)
    hit = make_answered_hit(campaign, workers, {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad", "Sad", "Sad"]})
    for worker, seconds in zip(workers, (19, 20, 21), strict=True):
        assignment = Assignment.objects.get(hit=hit, worker=worker)
        Assignment.objects.filter(pk=assignment.pk).update(
            accepted_at=assignment.submitted_at - timedelta(seconds=seconds)
        )
    empty = HIT.objects.create(campaign=campaign, position=2, required_workers=3)
    turn = d[2].turns.order_by("-position").first()
    HITItem.objects.create(hit=empty, position=1, dialogue=d[2], target_turn=turn, choices=["Angry", "Sad", "Joyful"])
    return campaign, d


def test_the_hourly_pay_comes_from_the_unrounded_median(quick):
    campaign, _ = quick
    crowd = crowd_figures(campaign, dialogue_answers(campaign))
    # median 20 s = 1/3 minute: 1.00 * 60 / (1/3) = 180.00; a median rounded to 0.33 min would give 181.82
    assert crowd.effective_hourly_pay == pytest.approx(180.00)
    assert crowd.median_minutes_per_hit == pytest.approx(0.3333)


def test_an_unanswered_item_is_not_counted_as_a_saving(quick):
    campaign, _ = quick
    bought = answers_bought(campaign)
    assert (bought["items"], bought["answered_items"]) == (3, 2)
    assert (bought["answers"], bought["fixed_answers"]) == (6, 6)  # not 9: the third item was never bought


def test_gold_changed_counts_only_items_humans_answered(quick):
    campaign, d = quick
    for dialogue, label in ((d[0], "Angry"), (d[1], "Sad"), (d[2], "Joyful")):  # d2: the model alone
        turn = dialogue.turns.order_by("-position").first()
        RaterAnswer.objects.create(
            campaign=campaign, rater="endpoint:chat", turn=turn, label_text=label, status=RaterAnswer.OK
        )
    rater = build_report(campaign, resamples=10).model_raters[0]
    assert rater["answered"] == 3 and rater["items"] == 2  # d2 has no crowd gold to score against
    assert rater["gold_changed"] == 0  # the model agrees on d0, d1; d2 had no crowd gold to change


def test_a_campaign_made_here_says_so_and_an_import_needs_its_format(db):
    campaign = create_campaign("Here")
    assert campaign.provenance == Campaign.RUN_HERE
    provenance = campaign_provenance(campaign)
    assert (provenance.imported, provenance.rater_noun, provenance.license) == (False, "worker", "")
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("Import", provenance=Campaign.IMPORTED)
    assert refused.value.field == "source_format"
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("Odd", provenance="elsewhere")
    assert refused.value.field == "provenance"
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("Mixed", source_license="cc-by-4.0")
    assert refused.value.field == "provenance"
    assert Campaign.objects.count() == 1


def test_an_imported_campaign_claims_no_hits_pay_or_workers(db):
    Label.objects.get_or_create(name="Sad", defaults={"kind": Label.EMOTION})
    campaign = create_campaign(
        "From a file", provenance=Campaign.IMPORTED, source_format="edos-mturk", source_license="cc-by-4.0"
    )
    workers = make_workers(3)
    d = make_dialogues(2)
    make_answered_hit(campaign, workers, {d[0]: ["Sad", "Sad", "Angry"], d[1]: ["Angry", "Angry", "Angry"]})
    report = build_report(campaign, resamples=10)
    assert (report.crowd.hits, report.crowd.dawid_skene_accuracy.count, report.crowd.effective_hourly_pay) == (
        0,
        0,
        None,
    )
    assert report.provenance.license_name == "CC BY 4.0" and report.provenance.hits == 0
    raters = {row["rater"] for row in report.tables.worker_kappa}
    assert raters == {"answer column 1", "answer column 2", "answer column 3"}


def test_the_page_of_an_import_says_imported_and_shows_no_crowd_figures(db, client, researcher, settings):
    settings.STUDY_REPORT_RESAMPLES = 10
    campaign = create_campaign(
        "From a file", provenance=Campaign.IMPORTED, source_format="edos-mturk", source_license="cc-by-4.0"
    )
    d = make_dialogues(2)
    make_answered_hit(campaign, make_workers(3), {d[0]: ["Sad", "Sad", "Angry"], d[1]: ["Angry"] * 3})
    client.force_login(researcher)
    page = client.get(reverse("labeling:study_report", args=[campaign.pk])).content.decode()
    assert 'data-provenance="imported"' in page and "CC BY 4.0" in page and "<strong>Imported</strong>" in page
    assert "answer columns in the source file (not workers)" in page and "answer column 1" in page
    assert "HITs per worker" not in page and "Dawid-Skene accuracy per worker" not in page
