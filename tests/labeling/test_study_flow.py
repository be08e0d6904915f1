"""A participant's study, start to finish, through the real pages: consent -> instructions ->
practice (feedback, retry) -> work -> exit survey -> done, each page naming its step in data-step;
nothing scarce before the first work screen; declining takes nothing; the study report's funnel."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import AuditEntry
from labeling.models import Assignment, ConsentDecision, StudyStep, SurveyResponse
from labeling.services.workers import worker_for_user
from labeling.study_flow.config import clean_flow
from labeling.study_flow.demo import DEMO_FLOW
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign

pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

STEP = re.compile(r'<main[^>]*data-step="([a-z]+)"')
ITEMS = DEMO_FLOW["practice"]["items"]


@pytest.fixture
def campaign(db):
    """A demo-like campaign: the demo's whole flow (consent, instructions, 3 practice, 3 survey)."""
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, study_flow=clean_flow(DEMO_FLOW))
    build_hits(campaign, make_dialogues(4), seed=5)
    return campaign


def step_of(response) -> str:
    found = STEP.search(response.content.decode())
    assert found, response.content.decode()[:600]
    return found.group(1)


def held(user) -> int:
    return Assignment.objects.filter(worker__user=user).count()


def claim(client, campaign):
    return client.post(reverse("labeling:claim"), {"campaign": campaign.pk}, follow=True)


def practise(client, campaign, answers: list[str], *, retry: bool = False):
    """Answer the practice screens in order (`retry`: a new attempt, from the outcome's "Try
    again" link); each answer's page is its feedback. Returns the feedback pages and the outcome."""
    url = reverse("labeling:study_practice", args=[campaign.pk])
    feedback = []
    for index, answer in enumerate(answers):
        page = client.get(url + ("?retry=1" if retry and index == 0 else ""))
        assert step_of(page) == "practice" and f'name="item" value="{index}"' in page.content.decode()
        page = client.post(url, {"item": index, "answer": answer}, follow=True)
        feedback.append(page)
        page = client.get(url)
    return feedback, page


def test_a_new_participant_meets_every_step_in_order_and_holds_no_seat_before_the_work(client, annotators, campaign):
    user = annotators[0]
    client.force_login(user)
    steps = []

    page = claim(client, campaign)
    steps.append(step_of(page))
    assert held(user) == 0
    page = client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "agree"}, follow=True)
    steps.append(step_of(page))
    assert held(user) == 0
    page = client.post(reverse("labeling:study_instructions", args=[campaign.pk]), follow=True)
    steps.append(step_of(page))
    assert held(user) == 0
    _, outcome = practise(client, campaign, [item["answer"] for item in ITEMS])
    assert 'data-passed="true"' in outcome.content.decode() and held(user) == 0
    page = client.post(reverse("labeling:study_begin", args=[campaign.pk]), follow=True)
    steps.append(step_of(page))
    assert held(user) == 1  # the seat is taken at the first work screen, not before
    # the instructions are a link away from every work screen, with a way back
    instructions = reverse("labeling:study_instructions", args=[campaign.pk])
    assert f'href="{instructions}" id="nav-instructions"' in page.content.decode()
    back = client.get(instructions, HTTP_REFERER=f"http://testserver{page.redirect_chain[-1][0]}")
    assert step_of(back) == "instructions" and 'id="instructions-back"' in back.content.decode()

    assignment = Assignment.objects.get(worker__user=user)
    answer_everything(assignment)
    client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    page = client.get(reverse("labeling:assignment_done", args=[assignment.pk]), follow=True)
    steps.append(step_of(page))
    page = client.post(
        page.redirect_chain[-1][0],
        {"difficulty": "4", "clarity": "Mostly clear", "comments": "The <b>labels</b> | overlap", "action": "answer"},
        follow=True,
    )
    steps.append(step_of(page))

    assert steps == ["consent", "instructions", "practice", "work", "survey", "done"]
    assert 'id="completion-code"' in page.content.decode()
    survey = SurveyResponse.objects.get(worker__user=user, campaign=campaign)
    assert survey.answers == {"difficulty": 4, "clarity": "Mostly clear", "comments": "The <b>labels</b> | overlap"}
    reached = set(StudyStep.objects.filter(worker__user=user).values_list("step", flat=True))
    assert {
        "arrived",
        "consented",
        "instructions",
        "instructions_read",
        "practice_passed",
        "work",
        "submitted",
        "survey_answered",
        "done",
    } <= reached


def test_the_consent_decision_is_recorded_with_its_version_and_time_in_the_audit_log(client, annotators, campaign):
    client.force_login(annotators[0])
    client.get(reverse("labeling:study_consent", args=[campaign.pk]))
    url = reverse("labeling:study_consent", args=[campaign.pk])
    client.post(url, {"decision": "agree"})
    client.post(url, {"decision": "decline"})  # the other button in another tab: the first answer stands
    decision = ConsentDecision.objects.get(worker__user=annotators[0])
    assert decision.consented and decision.version == 1 and decision.decided_at is not None
    entries = AuditEntry.objects.filter(kind__startswith="consent.")
    assert [(e.kind, e.new["version"], e.campaign_id) for e in entries] == [("consent.given", 1, campaign.pk)]


def test_declining_takes_no_seat_and_gives_no_hit(client, annotators, campaign):
    user = annotators[1]
    client.force_login(user)
    claim(client, campaign)
    page = client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "decline"}, follow=True)
    assert step_of(page) == "declined"
    assert held(user) == 0
    again = claim(client, campaign)  # straight to the claim again: still no HIT
    assert step_of(again) == "declined" and held(user) == 0
    assert client.get(reverse("labeling:study_practice", args=[campaign.pk]), follow=True).redirect_chain


def test_reading_the_practice_feedback_and_using_it_on_the_retry_passes(client, annotators, campaign):
    user = annotators[2]
    client.force_login(user)
    client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "agree"})
    client.post(reverse("labeling:study_instructions", args=[campaign.pk]))
    wrong = [next(c for c in item["choices"] if c != item["answer"]) for item in ITEMS]
    feedback, outcome = practise(client, campaign, wrong)
    assert 'data-passed="false"' in outcome.content.decode() and 'id="practice-retry"' in outcome.content.decode()
    # what the feedback taught: the right label of each screen, read off its page
    learned = [re.search(r"the right answer is ([A-Za-z]+)", page.content.decode()).group(1) for page in feedback]
    assert all("Why:" in page.content.decode() for page in feedback)
    _, outcome = practise(client, campaign, learned, retry=True)
    assert 'data-passed="true"' in outcome.content.decode()
    assert held(user) == 0
    page = client.post(reverse("labeling:study_begin", args=[campaign.pk]), follow=True)
    assert step_of(page) == "work" and held(user) == 1


def test_failing_every_try_leaves_without_a_seat_and_practice_is_never_quiz_gold(client, annotators, campaign):
    user = annotators[0]
    client.force_login(user)
    client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "agree"})
    client.post(reverse("labeling:study_instructions", args=[campaign.pk]))
    wrong = [next(c for c in item["choices"] if c != item["answer"]) for item in ITEMS]
    practise(client, campaign, wrong)
    _, outcome = practise(client, campaign, wrong, retry=True)
    assert 'id="practice-failed"' in outcome.content.decode()
    assert step_of(claim(client, campaign)) == "practice" and held(user) == 0
    # a third try is not taken
    client.post(reverse("labeling:study_practice", args=[campaign.pk]), {"item": 0, "answer": ITEMS[0]["answer"]})
    assert "practice_passed" not in set(StudyStep.objects.filter(worker__user=user).values_list("step", flat=True))
    assert not campaign.hits.filter(items__quiz_question__text__in=[i["turns"][-1][1] for i in ITEMS]).exists()


def test_bad_posts_get_a_4xx_naming_the_field(client, annotators, campaign):
    client.force_login(annotators[0])
    assert client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "maybe"}).status_code == 400
    client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "agree"})
    client.post(reverse("labeling:study_instructions", args=[campaign.pk]))
    url = reverse("labeling:study_practice", args=[campaign.pk])
    assert client.post(url, {"item": 0, "answer": "Not a choice"}).status_code == 400
    assert client.post(url, {"item": 99, "answer": "Joyful"}).status_code == 400


def test_a_survey_answer_off_its_scale_is_refused_naming_the_question(client, annotators, campaign):
    user = annotators[0]
    client.force_login(user)
    worker = worker_for_user(user)
    from labeling.study_flow import progress

    progress.walk_as_simulated(worker, campaign)
    page = client.post(reverse("labeling:study_begin", args=[campaign.pk]), follow=True)
    assignment = Assignment.objects.get(worker=worker)
    answer_everything(assignment)
    client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    url = reverse("labeling:study_survey", args=[campaign.pk]) + f"?assignment={assignment.pk}"
    page = client.post(url, {"difficulty": "9", "action": "answer"})
    assert page.status_code == 400 and "difficulty" in page.content.decode()
    assert not SurveyResponse.objects.exists()
    client.post(url, {"action": "skip"})
    assert SurveyResponse.objects.get().skipped
    assert step_of(client.get(reverse("labeling:assignment_done", args=[assignment.pk]))) == "done"


def test_the_campaign_texts_follow_the_active_language_with_a_fallback(client, annotators, campaign):
    """The participant's language (the browser's Accept-Language here) picks the researcher's
    version (here: Arabic consent, instructions and survey); what has no version in it (the
    practice items) is shown as written."""
    client.force_login(annotators[0])
    consent = reverse("labeling:study_consent", args=[campaign.pk])
    arabic = client.get(consent, HTTP_ACCEPT_LANGUAGE="ar").content.decode()
    english = client.get(consent, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "عن هذه الدراسة" in arabic and "About this study" not in arabic
    assert "About this study" in english and "عن هذه الدراسة" not in english
    client.post(consent, {"decision": "agree"})
    client.post(reverse("labeling:study_instructions", args=[campaign.pk]))
    practice = client.get(reverse("labeling:study_practice", args=[campaign.pk]), HTTP_ACCEPT_LANGUAGE="ar")
    practice = practice.content.decode()
    assert "I got the job!" in practice  # no Arabic practice given: the campaign's own language


def test_study_report_json_holds_the_funnel_with_declines_and_the_survey(client, annotators, campaign):
    from labeling.study_flow import progress

    first, second = (worker_for_user(user) for user in annotators[:2])
    progress.walk_as_simulated(first, campaign)
    client.force_login(annotators[0])
    client.post(reverse("labeling:study_begin", args=[campaign.pk]))
    assignment = Assignment.objects.get(worker=first)
    answer_everything(assignment)
    client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    url = reverse("labeling:study_survey", args=[campaign.pk]) + f"?assignment={assignment.pk}"
    client.post(url, {"difficulty": "2", "clarity": "Clear", "comments": "<script>x</script>", "action": "answer"})
    client.force_login(annotators[1])
    client.get(reverse("labeling:study_consent", args=[campaign.pk]))
    client.post(reverse("labeling:study_consent", args=[campaign.pk]), {"decision": "decline"})

    out = StringIO()
    call_command("study_report", str(campaign.pk), "--format", "json", "--resamples", "10", stdout=out)
    flow = json.loads(out.getvalue())["study_flow"]
    counts = flow["funnel"]["counts"]
    assert counts["arrived"] == 2 and counts["consented"] == 1 and counts["declined"] == 1
    assert counts["passed practice"] == 1 and counts["started work"] == 1 and counts["submitted"] == 1
    assert counts["answered survey"] == 1
    survey = {q["key"]: q for q in flow["survey"]}
    assert survey["difficulty"]["distribution"]["2"] == 1 and survey["clarity"]["counts"]["Clear"] == 1
    assert survey["comments"]["texts"] == ["<script>x</script>"]
    assert flow["survey_answers"][0]["answers"]["clarity"] == "Clear"
    assert flow["practice_and_quiz"][0]["practice_accuracy"] == 1.0
    assert second.pk not in {row["worker"] for row in flow["practice_and_quiz"]}

    markdown = StringIO()
    call_command("study_report", str(campaign.pk), "--format", "md", "--resamples", "10", stdout=markdown)
    assert "&lt;script&gt;" in markdown.getvalue() and "<script>" not in markdown.getvalue()


def test_a_claim_of_any_campaign_meets_the_flow_of_the_only_open_one(client, annotators, campaign):
    client.force_login(annotators[0])
    page = client.post(reverse("labeling:claim"), follow=True)  # no campaign named (the home page's old form)
    assert step_of(page) == "consent" and held(annotators[0]) == 0


def test_a_claim_of_any_campaign_with_several_open_goes_home_until_each_flow_is_done(client, annotators, campaign):
    from labeling.study_flow import progress

    other = open_campaign(name="Day shift", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(other, make_dialogues(2, prefix="o"), seed=6)
    client.force_login(annotators[0])
    response = client.post(reverse("labeling:claim"))
    assert response["Location"] == reverse("labeling:worker_home") and held(annotators[0]) == 0
    progress.walk_as_simulated(worker_for_user(annotators[0]), campaign)
    response = client.post(reverse("labeling:claim"))
    assert "/assignments/" in response["Location"] and held(annotators[0]) == 1


def test_the_exit_survey_export_carries_each_participants_answers(client, annotators, researcher, campaign):
    from labeling.study_flow import progress

    worker = worker_for_user(annotators[0])
    progress.save_survey(worker, campaign, {"difficulty": 3, "comments": 'said "hi", then left'}, language="ar")
    progress.save_survey(worker, campaign, {"difficulty": 5})  # a second one (another tab): the first stands
    client.force_login(researcher)
    csv_text = client.get(reverse("labeling:survey_download", args=[campaign.pk, "csv"])).content.decode()
    header, row = csv_text.strip().splitlines()
    assert header == "worker,platform,submitted_at,language,skipped,difficulty,clarity,comments"
    assert row.startswith("annotator1,site,") and row.endswith(',ar,False,3,,"said ""hi"", then left"')
    jsonl = client.get(reverse("labeling:survey_download", args=[campaign.pk, "jsonl"])).content.decode()
    assert json.loads(jsonl)["answers"] == {"difficulty": 3, "comments": 'said "hi", then left'}
    assert client.get(reverse("labeling:survey_download", args=[campaign.pk, "xml"])).status_code == 404
    client.force_login(annotators[1])
    assert client.get(reverse("labeling:survey_download", args=[campaign.pk, "csv"])).status_code in (302, 403, 404)


def test_an_htmx_claim_is_sent_to_the_flow_as_a_whole_page(client, annotators, campaign):
    client.force_login(annotators[0])
    response = client.post(reverse("labeling:claim"), {"campaign": campaign.pk}, HTTP_HX_REQUEST="true")
    assert response.status_code == 204 and response["HX-Redirect"] == reverse(
        "labeling:study_entry", args=[campaign.pk]
    )
    assert held(annotators[0]) == 0


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "orm"])
def test_the_gate_reads_the_same_with_the_annotator_fast_path_on_or_off(
    client, annotators, campaign, settings, fast_path
):
    from labeling.study_flow import progress

    settings.ANNOTATOR_FAST_PATH = fast_path
    client.force_login(annotators[0])
    assert step_of(claim(client, campaign)) == "consent" and held(annotators[0]) == 0
    progress.walk_as_simulated(worker_for_user(annotators[0]), campaign)
    assert step_of(claim(client, campaign)) == "work" and held(annotators[0]) == 1
    assert StudyStep.objects.filter(worker__user=annotators[0], step="work").count() == 1


def test_the_instructions_list_the_label_set_with_descriptions_and_what_other_is_for(client, annotators, campaign):
    from annotation.models import Label

    joyful = Label.objects.get(name="Joyful")
    campaign.labels.set([joyful])
    client.force_login(annotators[0])
    page = client.get(reverse("labeling:study_instructions", args=[campaign.pk])).content.decode()
    assert "<dt>Joyful</dt>" in page and joyful.description in page and 'id="other-explained"' in page
    assert "<dt>Sad</dt>" not in page  # the campaign's own set, not every label
    assert "<strong>only its last turn</strong>" in page  # the campaign's Markdown, rendered
