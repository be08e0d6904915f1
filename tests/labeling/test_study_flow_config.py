"""The study flow as data (labeling.study_flow.config, pure) and as a campaign setting: checked
once with the field named, on the campaign form, the settings page and the API; a consent whose
words change gets a new version; texts per language fall back to the campaign's own."""

import copy
import json

import pytest
from django.urls import reverse

from annotation.models import AuditEntry
from labeling.services.campaigns import CampaignRefused, change_campaign_settings, create_campaign
from labeling.study_flow import config, markdown, texts
from labeling.study_flow.demo import DEMO_FLOW
from labeling.work import label_texts


def flow(**changes) -> dict:
    raw = copy.deepcopy(DEMO_FLOW)
    raw.update(changes)
    return raw


# --- pure ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (flow(extra=1), "study_flow.extra"),
        (flow(consent={"information": "x"}), "study_flow.consent.statement"),
        (flow(practice={"items": []}), "study_flow.practice.items"),
        (
            flow(practice={"items": [{**DEMO_FLOW["practice"]["items"][0], "answer": "Nope"}]}),
            "study_flow.practice.items[0].answer",
        ),
        (flow(practice={**DEMO_FLOW["practice"], "pass_mark": 4}), "study_flow.practice.pass_mark"),
        (flow(survey=[{"key": "a", "kind": "stars", "question": "q"}]), "study_flow.survey[0].kind"),
        (flow(survey=[{"key": "a", "kind": "text", "question": "q"}] * 2), "study_flow.survey[1].key"),
        (flow(platform={"prolific_no_consent_code": "not a code!"}), "study_flow.platform.prolific_no_consent_code"),
        (flow(translations={"Arabic": {}}), "study_flow.translations.Arabic"),
        (flow(translations={"ar": {"survey": {"nope": {"question": "q"}}}}), "study_flow.translations.ar.survey.nope"),
        ("a string", "study_flow"),
    ],
)
def test_a_bad_flow_is_refused_naming_the_field(raw, field):
    with pytest.raises(config.FlowRefused) as refused:
        config.clean_flow(raw)
    assert refused.value.field == field


def test_a_consent_whose_words_change_gets_the_next_version_and_the_same_words_keep_theirs():
    first = config.clean_flow(DEMO_FLOW)
    same = config.clean_flow(DEMO_FLOW, first)
    changed = config.clean_flow(flow(consent={**DEMO_FLOW["consent"], "statement": "I agree."}), first)
    assert (first["consent"]["version"], same["consent"]["version"], changed["consent"]["version"]) == (1, 1, 2)


def test_the_next_step_follows_the_flow_and_stops_at_a_decline_or_a_failed_practice():
    cleaned = config.clean_flow(DEMO_FLOW)
    assert config.next_step(cleaned, set()) == "consent"
    assert config.next_step(cleaned, {"consented"}) == "instructions"
    assert config.next_step(cleaned, {"consented", "instructions"}) == "instructions"  # shown, not read yet
    assert config.next_step(cleaned, {"consented", "instructions_read"}) == "practice"
    assert config.next_step(cleaned, {"consented", "instructions_read", "practice_passed"}) is None
    assert config.next_step(cleaned, {"declined"}) == "declined"
    assert config.next_step(cleaned, {"consented", "instructions_read", "practice_failed"}) == "practice_failed"
    assert config.next_step(config.clean_flow({"survey": DEMO_FLOW["survey"]}), set()) is None


def test_an_attempt_passes_at_the_mark_and_counts_its_retries():
    practice = config.clean_flow(DEMO_FLOW)["practice"]
    answers = {i: item["answer"] for i, item in enumerate(practice["items"])}
    assert config.attempt_result(practice, answers, 1).passed
    answers[0] = "Sad"
    answers[1] = "Joyful"
    result = config.attempt_result(practice, answers, 1)
    assert (result.right, result.passed, result.retries_left) == (1, False, 1)
    assert config.attempt_result(practice, answers, 2).retries_left == 0


def test_survey_answers_are_checked_and_summarised():
    questions = config.clean_flow(DEMO_FLOW)["survey"]
    answers = config.clean_survey_answers(questions, {"difficulty": "5", "clarity": "Clear", "comments": " fine "})
    assert answers == {"difficulty": 5, "clarity": "Clear", "comments": "fine"}
    with pytest.raises(config.FlowRefused) as refused:
        config.clean_survey_answers(questions, {"clarity": "Purple"})
    assert refused.value.field == "clarity"
    summary = {row["key"]: row for row in config.survey_summary(questions, [answers, {"difficulty": 1}])}
    assert summary["difficulty"]["distribution"] == {"1": 1, "2": 0, "3": 0, "4": 0, "5": 1}
    assert summary["clarity"]["counts"] == {"Clear": 1, "Mostly clear": 0, "Often unclear": 0}
    assert summary["comments"]["texts"] == ["fine"]


def test_the_funnel_counts_people_and_the_median_time_per_step():
    reached = {
        1: {"arrived": 0, "consent": 0, "consented": 10, "practice": 20, "practice_passed": 50, "work": 60},
        2: {"arrived": 0, "consent": 0, "declined": 30},
    }
    result = config.funnel(reached)
    assert result["counts"]["arrived"] == 2 and result["counts"]["declined"] == 1 and result["counts"]["consented"] == 1
    assert result["median_seconds"]["consent"] == 20.0 and result["median_seconds"]["practice"] == 30.0


def test_texts_in_a_language_fall_back_to_the_campaign_language():
    cleaned = config.clean_flow(DEMO_FLOW)
    arabic, french = texts.texts_in(cleaned, "ar"), texts.texts_in(cleaned, "fr")
    assert arabic["consent"]["statement"].startswith("قرأت") and arabic["consent"]["version"] == 1
    assert arabic["practice"] == cleaned["practice"]  # none given in Arabic
    assert french["consent"] == cleaned["consent"]
    assert dict(arabic["survey"][1]["options"])["Clear"] == "واضحة"  # the stored value stays the campaign's
    assert texts.texts_in(cleaned, "ar-eg")["instructions"] == arabic["instructions"]


def test_a_labels_version_is_found_as_the_pages_find_the_languages_texts():
    flow = config.clean_flow(
        {
            "instructions": "Label the last turn.",
            "translations": {
                "pt": {"labels": {"joyful": {"name": "Alegre", "description": "Feliz"}}},
                "pt-br": {"instructions": "Rotule o último turno."},  # no labels: none shown, as texts_in
                "ar": {"labels": {"Joyful": {"name": "مبتهج"}}},
            },
        }
    )
    translations = flow["translations"]
    assert [label_texts.translation_key(translations, code) for code in ("ar", "AR", "pt-br", "pt", "fr", None)] == [
        "ar", "ar", "pt-br", "pt", "", ""
    ]  # fmt: skip
    assert label_texts.labels_in(flow, "pt-br") == texts.texts_in(flow, "pt-br")["labels"] == {}
    portuguese = label_texts.labels_in(flow, "pt")
    assert label_texts.label_texts(portuguese, "Joyful") == {"name": "Alegre", "description": "Feliz"}  # any case
    assert (
        label_texts.label_shown(portuguese, "JOYFUL") == "Alegre"
        and label_texts.label_shown(portuguese, "Sad") == "Sad"
    )
    assert label_texts.label_named(label_texts.labels_in(flow, "ar"), " مبتهج ") == "Joyful"
    assert label_texts.label_named(portuguese, "Joyful") is None  # only the name shown in that language


def test_markdown_is_rendered_with_raw_html_and_script_links_left_inert():
    html = markdown.to_html("**bold** <script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=y>")
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "<img" not in html and 'href="javascript' not in html


# --- as a campaign setting ----------------------------------------------------------------------


def test_create_and_change_refuse_a_bad_flow_naming_the_field(db):
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("Flow", study_flow={"practice": {"items": "none"}})
    assert refused.value.field == "study_flow.practice.items"
    campaign = create_campaign("Flow", study_flow=DEMO_FLOW)
    assert campaign.study_flow["consent"]["version"] == 1
    change_campaign_settings(campaign, {"study_flow": flow(consent={**DEMO_FLOW["consent"], "statement": "Yes."})})
    assert campaign.study_flow["consent"]["version"] == 2
    entry = AuditEntry.objects.filter(kind="campaign.setting_changed").latest("pk")
    assert entry.new["study_flow"]["consent"]["version"] == 2


def test_the_settings_page_takes_the_flow_as_json_and_refuses_bad_json_with_a_400(client, researcher, db):
    campaign = create_campaign("Flow")
    client.force_login(researcher)
    url = reverse("labeling:campaign_settings", args=[campaign.pk])
    assert client.post(url, {"study_flow": "{not json", "reason": "r"}).status_code == 400
    refused = client.post(url, {"study_flow": json.dumps({"survey": [{"key": "a"}]}), "reason": "r"})
    assert refused.status_code == 400 and "study_flow.survey[0].kind" in refused.content.decode()
    assert client.post(url, {"study_flow": json.dumps(DEMO_FLOW), "reason": "the flow"}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.study_flow["practice"]["pass_mark"] == 2
    assert "I got the job!" in client.get(url).content.decode()


def test_the_api_creates_and_changes_a_campaign_with_its_flow(client, researcher, db):
    client.force_login(researcher)
    bad = client.post(
        "/api/campaigns/",
        {"name": "API flow", "study_flow": {"consent": {"information": "x"}}},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "study_flow.consent.statement" in json.dumps(bad.json())
    made = client.post(
        "/api/campaigns/", {"name": "API flow", "study_flow": DEMO_FLOW}, content_type="application/json"
    )
    assert made.status_code == 201, made.content
    assert made.json()["study_flow"]["survey"][0]["key"] == "difficulty"
    refused = client.post(
        "/api/campaigns/",
        {"name": "API flow", "study_flow": {"survey": [{"key": "a", "kind": "x", "question": "q"}]}},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "study_flow.survey[0].kind" in json.dumps(refused.json())
    url = f"/api/campaigns/{made.json()['id']}/settings/"
    changed = client.patch(url, {"study_flow": {}, "reason": "no flow"}, content_type="application/json")
    assert changed.status_code == 200 and changed.json()["study_flow"] == {}
