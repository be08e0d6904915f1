"""The study report of a small campaign whose every figure is worked out by hand; the command and the
page (researchers only, linked from the campaign page)."""

import json
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from labeling.crowd.agreement import fleiss_kappa, gwet_ac1, rating_table
from labeling.models import Assignment, Campaign, Response, Worker
from labeling.reports.study import build_report, to_json, to_latex, to_markdown
from labeling.reports.study.crowd import platform_minimum, spread
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

# as given: a typed label is its own category ("Forgetful (Other)")
GIVEN = [["Angry", "Angry", "Sad"], ["Sad", "Sad", "Sad"], ["Joyful", "Forgetful (Other)", "Angry"], ["Angry", "Angry"]]


@pytest.fixture
def study(db):
    campaign = Campaign.objects.create(
        name="Hand study", reward=Decimal("1.00"), bonus=Decimal("0.50"), quiz_pass_mark=3, workers_per_hit=3
    )
    workers = make_workers(3)
    d = make_dialogues(4)
    first = make_answered_hit(
        campaign, workers, {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad"] * 3, d[2]: ["Joyful", "Forgetful", "Angry"]}
    )
    second = make_answered_hit(campaign, workers[:2], {d[3]: ["Angry", "Angry"]})
    # minutes per HIT 10, 20, 30 (first HIT: w1, w2, w3), 40, 50 (second: w1, w2): median 30
    # quiz marks 3, 2, 1 and 3, 4: w1 mean 3, w2 mean 3, w3 1 -> 2 of 3 workers at the mark of 3;
    # 3 of 5 HITs earned the bonus -> pay per HIT 1.00 + 0.50 * 3/5 = 1.30 -> 1.30 * 60 / 30 = 2.60 an hour
    spans = {(first, 0): (10, 3), (first, 1): (20, 2), (first, 2): (30, 1), (second, 0): (40, 3), (second, 1): (50, 4)}
    for (hit, k), (minutes, mark) in spans.items():
        assignment = Assignment.objects.get(hit=hit, worker=workers[k])
        Assignment.objects.filter(pk=assignment.pk).update(
            accepted_at=assignment.submitted_at - timedelta(minutes=minutes), quiz_correct=mark
        )
    Worker.objects.filter(pk=workers[2].pk).update(status=Worker.BLOCKED)
    Response.objects.filter(assignment__worker=workers[1]).update(seconds_spent=1.0)  # w2 clicks through
    return campaign


def test_table_4_by_hand(study, settings):
    report = build_report(study, resamples=50, seed=1)
    t4 = report.table4
    assert (t4.dialogues, t4.majority, t4.majority_share, t4.majority_gold) == (4, 3, 0.75, 3)
    assert t4.fleiss_kappa == pytest.approx(fleiss_kappa(rating_table(GIVEN)))
    assert (t4.quiz_workers, t4.quiz_bonus_share, t4.quiz_bonus_mark) == (3, 0.6667, 3)
    assert t4.typed_dialogues == 1
    assert report.agreement.overall["gwet_ac1"].value == pytest.approx(gwet_ac1(rating_table(GIVEN)))
    assert set(report.agreement.per_label) == {"Angry", "Sad", "Joyful"}  # typed answers get no row


def test_the_crowd_by_hand(study, settings):
    settings.FAST_WORKER_MIN_ANSWERS = 2
    crowd = build_report(study, resamples=20).crowd
    assert (crowd.workers, crowd.hits) == (3, 5)
    # HITs per worker 2, 2, 1: median 2, p90 2 (interpolated between the two 2s), max 2
    assert (crowd.hits_per_worker.median, crowd.hits_per_worker.p90, crowd.hits_per_worker.maximum) == (2, 2, 2)
    assert crowd.median_minutes_per_hit == 30
    assert crowd.pay_per_hit == pytest.approx(1.30) and crowd.effective_hourly_pay == pytest.approx(2.60)
    assert (crowd.platform, crowd.platform_minimum) == (Worker.SITE, None)
    assert crowd.dawid_skene_accuracy.count == 3
    assert (crowd.flagged_workers, crowd.blocked_workers) == (1, 1)
    assert (crowd.answers, crowd.fixed_policy_answers, crowd.policy) == (11, 12, "fixed")


def test_spread_and_platform_minimum(settings):
    # numpy's linear percentiles over 1..10: p10 at position 0.9 -> 1.9, p90 at 8.1 -> 9.1
    values = spread([float(v) for v in range(1, 11)])
    assert (values.minimum, values.p10, values.median, values.p90, values.maximum) == (1, 1.9, 5.5, 9.1, 10)
    assert spread([]).median is None
    settings.MTURK_MIN_HOURLY_RATE = 7.25
    settings.PROLIFIC_MIN_HOURLY_RATE_GBP = 6.0
    assert platform_minimum(Worker.MTURK, "USD") == 7.25
    assert platform_minimum(Worker.PROLIFIC, "GBP") == 6.0
    assert platform_minimum(Worker.SITE, "USD") is None


def test_the_renderings_carry_the_figures(study):
    report = build_report(study, resamples=30, seed=2)
    markdown, latex, data = to_markdown(report), to_latex(report), json.loads(to_json(report))
    kappa = data["agreement"]["overall"]["fleiss_kappa"]
    assert data["table4"]["majority"] == 3 and data["agreement"]["resamples"] == 30
    assert "| Labeled by majority | 3 (75.0 %) |" in markdown
    assert f"| Fleiss' kappa | {kappa['value']:.3f} [{kappa['low']:.3f}, {kappa['high']:.3f}] |" in markdown
    assert "Labeled by majority & 3 (75.0 \\%) \\\\" in latex and "\\begin{tabular}{lr}" in latex
    assert "66.7\\% of the 3 workers who took the quiz reached the bonus mark of 3" in latex
    assert (
        "4 dialogues were labeled by 3 crowd workers in 5 HITs (11 answers on dialogues under the fixed policy"
        in markdown
    )
    assert "the fixed policy would have bought 12 for the dialogues answered" in markdown
    # every figure with its N and the choice behind it
    assert "Agreement over the 4 dialogues with two answers or more (N = 11 answers, 4 categories" in markdown
    assert "(N = 5 HITs)" in markdown and "N = 3 workers" in markdown
    assert "an effective pay of 2.60 USD per hour" in markdown


def test_the_command_takes_a_format_seed_and_resamples(study):
    runs = []
    for seed in (1, 1, 2):
        out = StringIO()
        call_command(
            "study_report", str(study.pk), "--format", "json", "--seed", str(seed), "--resamples", "40", stdout=out
        )
        runs.append(json.loads(out.getvalue())["agreement"])
    assert runs[0] == runs[1] and runs[0]["resamples"] == 40 and runs[2]["seed"] == 2
    with pytest.raises(CommandError, match="no campaign 999"):
        call_command("study_report", "999")
    with pytest.raises(CommandError, match="--resamples must be at least 1"):
        call_command("study_report", str(study.pk), "--resamples", "0")


def test_the_page_is_for_researchers_and_linked_from_the_campaign(study, client, researcher, annotators, settings):
    settings.STUDY_REPORT_RESAMPLES = 20
    url = reverse("labeling:study_report", args=[study.pk])
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(annotators[0])
    assert client.get(url).status_code == 403
    client.force_login(researcher)
    assert url in client.get(reverse("labeling:campaign_detail", args=[study.pk])).content.decode()
    page = client.get(url).content.decode()
    assert "Labeled by majority" in page and "\\begin{tabular}" in page and "4 dialogues were labeled" in page
    download = client.get(reverse("labeling:study_report_download", args=[study.pk, "tex"]))
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    assert client.get(reverse("labeling:study_report_download", args=[study.pk, "docx"])).status_code == 404


def test_a_campaign_without_answers_reports_empty_figures(db):
    campaign = Campaign.objects.create(name="Nothing yet")
    report = build_report(campaign, resamples=10)
    assert (report.table4.dialogues, report.table4.majority_share, report.crowd.workers) == (0, None, 0)
    assert report.agreement.overall["fleiss_kappa"].value is None
    assert "| Fleiss' kappa | n/a |" in to_markdown(report)
    assert "n/a" in to_latex(report) and json.loads(to_json(report))["table4"]["dialogues"] == 0


def test_a_pairwise_campaign_has_no_study_report(db, client, researcher):
    from labeling.task_types.pairwise import PAIRWISE

    campaign = Campaign.objects.create(name="Pairs", task_type=PAIRWISE)
    client.force_login(researcher)
    assert client.get(reverse("labeling:study_report", args=[campaign.pk])).status_code == 404
