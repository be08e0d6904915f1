"""`demo_setup` on a small corpus: the whole loop runs, every page of the navigation has something
true to show, seats stay open for people, and a second run adds nothing."""

import io
import re

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def demo(settings, tmp_path, run_jobs_at_once):
    settings.MEDIA_ROOT = tmp_path / "media"  # every other setting as shipped: what `make demo` builds
    output = io.StringIO()
    call_command("demo_setup", "--size", "300", "--per-label", "3", stdout=output)
    return output.getvalue()


def counts():
    from annotation.models import Dialogue, ModelVersion, Prediction, TurnLabel
    from jobs.models import JobRun
    from labeling.models import HIT, Assignment, Campaign, PaymentEntry, Response

    tables = (Dialogue, Prediction, TurnLabel, ModelVersion, JobRun, Campaign, HIT, Assignment, Response, PaymentEntry)
    return {model.__name__: model.objects.count() for model in tables}


def test_demo_setup_builds_the_whole_loop_leaves_content_on_every_page_and_a_rerun_adds_nothing(
    demo, client, django_user_model, tmp_path
):
    from annotation.models import Dialogue, ModelVersion, Prediction, SubtitleFile, Turn, TurnLabel
    from jobs.models import JobRun
    from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, PaymentEntry

    assert "Demo ready" in demo and "/labeling/campaigns/" in demo and "annotator1 / demo-annotator1" in demo
    assert SubtitleFile.objects.count() == 4 + 5  # the hand-written films and 300 dialogues / 60 per film
    assert set(Dialogue.objects.values_list("language", flat=True)) >= {"en", "fr"}
    campaign = Campaign.objects.get(name="Demo campaign")
    assert campaign.status == Campaign.OPEN
    demo_study_flow(campaign)
    hits = list(HIT.objects.filter(campaign=campaign).order_by("position", "pk"))
    real_quiz_pool_only(campaign)
    assert len(hits) >= 4 and all(hit.assignments.count() == 0 for hit in hits[-2:])  # seats open for people
    assert Assignment.objects.done().filter(hit__campaign=campaign).count() == 3 * (len(hits) - 2)
    assert AggregatedLabel.objects.filter(campaign=campaign).exclude(dawid_skene_label="").exists()
    assert PaymentEntry.objects.filter(kind="bonus").exists() and PaymentEntry.objects.filter(kind="reward").exists()
    assert TurnLabel.objects.filter(source="crowd").exists() and TurnLabel.objects.filter(source="sbert").exists()
    assert ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).exists()
    assert Prediction.objects.filter(model_version__kind=ModelVersion.DIALOGUE).exists()
    kinds = set(JobRun.objects.filter(status=JobRun.SUCCEEDED).values_list("kind", flat=True))
    assert {"demo_build", "weak_train", "weak_apply", "rank_candidates", "labeling.aggregate_campaign"} <= kinds
    assert {"gold_split", "self_label_rounds", "bulk_annotate", "export_dataset"} <= kinds
    assert {"suggest_train", "skill_train", "nli_train", "botstalk"} <= kinds
    assert Dialogue.objects.filter(source="botstalk").exists()
    generation = JobRun.objects.filter(kind="botstalk", status=JobRun.SUCCEEDED).latest("pk").result
    assert generation["candidates"] == "corpus" and generation["emotion_labeler"]  # the demo corpus's pairs
    subtitle_texts = set(Turn.objects.filter(dialogue__source="").values_list("text", flat=True))
    assert set(Turn.objects.filter(dialogue__source="botstalk").values_list("text", flat=True)) <= subtitle_texts
    pairwise = Campaign.objects.get(name="Demo: BotsTalk vs subtitles")
    assert pairwise.task_type == "pairwise" and pairwise.status == Campaign.OPEN and pairwise.hits.exists()
    assert not JobRun.objects.exclude(status=JobRun.SUCCEEDED).exists()

    before = counts()
    again = io.StringIO()
    call_command("demo_setup", "--size", "300", "--per-label", "3", stdout=again)
    assert counts() == before
    assert "not queued again" in again.getvalue() and "0 files written" in again.getvalue()

    researcher = django_user_model.objects.get(username="demo")
    assert researcher.is_staff and researcher.check_password("demo-researcher")
    assert not django_user_model.objects.get(username="annotator1").is_staff
    every_page_in_the_navigation_has_content(campaign, client, django_user_model)
    the_manual_page_holds_the_demos_own_figures(tmp_path)


def the_manual_page_holds_the_demos_own_figures(folder):
    """demo_figures writes what the demo built into a page's block, --check passes on that page and
    fails on one whose figures are not the demo's; only the spammer is flagged as too fast."""
    from django.core.management import CommandError

    page = folder / "demo.md"
    page.write_text("# The demo\n\n<!-- demo-figures:start -->\nFIGURES-BEFORE\n<!-- demo-figures:end -->\n\nTimes.\n")
    call_command("demo_figures", "--write", str(page), stdout=io.StringIO())
    text = page.read_text()
    assert text.startswith("# The demo\n") and text.endswith("\n\nTimes.\n") and "FIGURES-BEFORE" not in text
    assert "- Flagged too fast: sim-spammer.\n" in text and "Fleiss' kappa" in text and "Gold split:" in text
    call_command("demo_figures", "--check", str(page), stdout=io.StringIO())
    page.write_text(text.replace("left open for people", "left open"))
    with pytest.raises(CommandError, match="demo.md: its demo figures are not the demo's as built"):
        call_command("demo_figures", "--check", str(page), stdout=io.StringIO())


def real_quiz_pool_only(campaign):
    """Every quiz screen of the demo is a whole corpus dialogue from the imported pool, never a
    one-turn bank item, and no quiz dialogue is also work."""
    from labeling.models import HITItem, QuizQuestion

    quiz = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=False)
    assert quiz.count() == campaign.quiz_per_hit * campaign.hits.count()
    assert not quiz.filter(quiz_question__dialogue__isnull=True).exists()
    assert set(quiz.values_list("quiz_question__source", flat=True)) == {QuizQuestion.IMPORTED}
    work = set(HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True).values_list("dialogue_id"))
    assert not work & set(quiz.values_list("dialogue_id"))


@pytest.mark.django_db
def test_it_builds_only_the_campaign_with_a_real_quiz_pool_when_asked(settings, tmp_path, run_jobs_at_once):
    from labeling.models import Assignment, Campaign

    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("demo_setup", "--size", "300", "--per-label", "3", "--campaign-only", stdout=io.StringIO())
    campaign = Campaign.objects.get(name="Demo campaign")
    assert campaign.status == Campaign.OPEN and campaign.hits.exists()
    assert not Assignment.objects.exists()  # stopped before the simulated crowd
    real_quiz_pool_only(campaign)
    assert (tmp_path / "media" / "demo" / "quiz_pool.csv").is_file()


def every_page_in_the_navigation_has_content(campaign, client, django_user_model):
    """One test with the build above: the demo takes minutes, so it is built once."""
    from annotation.models import ModelVersion
    from labeling.models import Campaign

    model = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).latest("pk")
    suggester = ModelVersion.objects.suggester()
    pairwise = Campaign.objects.get(name="Demo: BotsTalk vs subtitles")
    client.force_login(django_user_model.objects.get(username="demo"))
    pages = {
        "/corpus/": ["Quiet Harbour 1", "fr"],
        "/labeling/campaigns/": ["Demo campaign"],
        f"/labeling/campaigns/{campaign.pk}/": ["Demo campaign"],
        f"/labeling/campaigns/{campaign.pk}/report/": ["sim-careful-1", "sim-spammer", "kappa", "Top-1 suggestion"],
        f"/labeling/campaigns/{pairwise.pk}/": ["BotsTalk vs subtitles"],
        f"/labeling/campaigns/{pairwise.pk}/results/": ["Engagingness"],
        "/jobs/": ["demo_build", "self_label_rounds", "bulk_annotate"],
        "/models/": [model.name],
        f"/models/{model.pk}/": ["F1", "reliability"],
        f"/models/{suggester.pk}/": ["reliability", "top-3"],
        "/corpus/analysis/skills/": ["persona", "botstalk"],
        "/corpus/analysis/": ["crowd"],
        "/corpus/analysis/flows/": ["flows"],
        "/corpus/analysis/gaps/": ["5"],
        "/corpus/analysis/examples/": ["confidence"],
        "/corpus/analysis/evaluation/": ["F1"],
        "/corpus/analysis/exports/": ["gold", "silver", "extended"],
        "/corpus/analysis/dataset-utility/": ["Dataset utility", "finetuned_gold", "python manage.py dataset_utility"],
    }
    for url, expected in pages.items():
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        for snippet in expected:
            assert snippet.lower() in text.lower(), (url, snippet)

    client.force_login(django_user_model.objects.get(username="annotator1"))
    home = client.get("/labeling/").content.decode()
    assert "Demo campaign" in home
    annotator_claims_a_demo_hit_and_answers_a_screen(campaign, client)
    an_endpoint_rater_labels_the_demo_campaign_through_the_stand_in(campaign)


def annotator_claims_a_demo_hit_and_answers_a_screen(campaign, client):
    """annotator1 (signed in above) starts the demo campaign through the page, meets its study flow
    first (consent, instructions, practice; no seat held meanwhile), claims a HIT, answers its
    first screen and is shown the second: the seats left open are claimable with the shipped settings."""
    from labeling.models import Assignment

    flow_first = client.post("/labeling/claim/", {"campaign": campaign.pk})
    assert flow_first.status_code == 302 and flow_first["Location"] == f"/labeling/study/{campaign.pk}/", flow_first
    study = f"/labeling/study/{campaign.pk}"
    client.post(f"{study}/consent/", {"decision": "agree"})
    client.post(f"{study}/instructions/")
    for index, item in enumerate(campaign.study_flow["practice"]["items"]):
        client.post(f"{study}/practice/", {"item": index, "answer": item["answer"]})
    assert not Assignment.objects.filter(worker__user__username="annotator1").exists()
    claimed = client.post(f"{study}/begin/")
    assert claimed.status_code == 302 and "/items/1/" in claimed["Location"], claimed
    screen = client.get(claimed["Location"]).content.decode()
    choice = re.search(r'name="answer" value="([^"]+)"', screen).group(1)
    answered = client.post(claimed["Location"] + "answer/", {"answer": choice, "go": "next", "seconds": "5"})
    assert answered.status_code == 302 and answered["Location"].endswith("/items/2/"), answered
    assert client.get(answered["Location"]).status_code == 200


def an_endpoint_rater_labels_the_demo_campaign_through_the_stand_in(campaign):
    """A chat model behind an OpenAI-compatible endpoint (the stand-in server of the raters' tests,
    on 127.0.0.1) rates the demo campaign's items; the study report shows it beside the crowd."""
    from labeling.models import RaterAnswer
    from labeling.reports.study import build_report
    from labeling.services.raters.endpoint import Endpoint
    from labeling.services.raters.rate import rate_with_endpoint
    from tests.labeling.test_model_raters import StandIn

    stand_in = StandIn()
    try:
        endpoint = Endpoint(url=stand_in.url, model="stand-in-chat", key="sk-demo", timeout=5.0, max_retries=1)
        result = rate_with_endpoint(campaign, endpoint, sleep=lambda seconds: None)
    finally:
        stand_in.close()
    answers = RaterAnswer.objects.filter(campaign=campaign)
    assert result["items"] == answers.count() > 0 and answers.filter(status="ok").count() == answers.count()
    figures = build_report(campaign, resamples=20).model_raters[0]
    assert figures["rater"] == "endpoint:stand-in-chat" and figures["statuses"]["ok"] == answers.count()


def demo_study_flow(campaign) -> None:
    """The demo campaign runs the whole study flow (consent, instructions, three practice items,
    three survey questions), and its simulated crowd walked it before its work."""
    from labeling.models import Assignment, StudyStep

    flow = campaign.study_flow
    assert flow["consent"]["statement"] and flow["instructions"]
    assert len(flow["practice"]["items"]) == 3 and len(flow["survey"]) == 3
    worked = set(Assignment.objects.filter(hit__campaign=campaign).values_list("worker_id", flat=True))
    passed = set(
        StudyStep.objects.filter(campaign=campaign, step="practice_passed").values_list("worker_id", flat=True)
    )
    assert worked and worked <= passed
