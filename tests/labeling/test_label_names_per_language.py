"""The work screens show a label's name, description and examples in the participant's language
where the researcher gave a version of them (Campaign.study_flow's translations), else as the
label has them; the answer stored is always the label itself, never the translated text. The
same with the annotator fast path on and off (each test that switches it says so itself)."""

import re

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import translation

from labeling.models import Assignment, Response
from labeling.services.campaigns import change_campaign_settings
from labeling.task_types.last_turn_label import screen
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [pytest.mark.usefixtures("quiz_demo_bank"), pytest.mark.django_db]

HTMX = {"HTTP_HX_REQUEST": "true"}
JOYFUL_AR, JOYFUL_AR_DESCRIPTION, JOYFUL_AR_EXAMPLE = "مبتهج", "فرح واضح في الكلام", "يا له من يوم رائع"
HOSTILE = "<script>alert(1)</script>"
LABELS_AR = {
    "Joyful": {"name": JOYFUL_AR, "description": JOYFUL_AR_DESCRIPTION, "examples": [JOYFUL_AR_EXAMPLE]},
    "sad": {"name": HOSTILE, "description": 'a "quoted" <b>bold</b> claim'},  # any case names the label
}
CHOICE = re.compile(r'name="answer" value="([^"]+)" data-key="\d"[^>]*>\s*<span class="choice-name"><kbd>\d</kbd> '
                    r'<span dir="auto">(.*?)</span>')  # fmt: skip


@pytest.fixture(autouse=True)
def _the_default_language_after_each_test():
    """LocaleMiddleware leaves the last request's language active in this thread: put it back."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(3), seed=5)
    change_campaign_settings(campaign, {"study_flow": {"translations": {"ar": {"labels": LABELS_AR}}}})
    return campaign


def claim_in(user, language: str) -> tuple[Client, Assignment, str]:
    """A signed-in browser asking for `language`, its claimed assignment and its first screen."""
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    claimed = client.post(reverse("labeling:claim"))
    assignment = Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", claimed["Location"]).group(1)))
    first = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1]))
    assert first.status_code == 200
    return client, assignment, first.content.decode()


def other_list(page: str) -> str:
    return re.search(r'<ul class="label-list" id="label-list">(.*?)</ul>', page, re.S).group(1)


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "orm"])
def test_the_screen_shows_the_researchers_names_in_the_participants_language(campaign, annotators, settings, fast_path):
    settings.ANNOTATOR_FAST_PATH = fast_path
    _, _, arabic = claim_in(annotators[0], "ar")
    listed = other_list(arabic)
    assert f'value="Joyful"> <strong dir="auto">{JOYFUL_AR}</strong>' in listed
    assert f'<span class="muted" dir="auto">{JOYFUL_AR_DESCRIPTION}</span>' in listed
    assert 'value="Neutral"> <strong dir="auto">Neutral</strong>' in listed  # no version given: its own name
    assert ">Joyful<" not in arabic
    # the filter finds a label by the name shown and by its own
    assert re.search(rf'data-filter="{JOYFUL_AR} {JOYFUL_AR_DESCRIPTION} joyful"', listed)
    _, _, english = claim_in(annotators[1], "en")
    assert 'value="Joyful"> <strong dir="auto">Joyful</strong>' in other_list(english)
    assert JOYFUL_AR not in english and "alert(1)" not in english


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "orm"])
def test_the_three_choices_show_the_names_and_blurbs_and_post_the_labels_own(campaign, annotators, settings, fast_path):
    """Every screen through Next: the choices are shown translated where given, their values are
    the labels' own names, and each stored answer is the label (its canonical name), in Arabic."""
    settings.ANNOTATOR_FAST_PATH = fast_path
    client, assignment, page = claim_in(annotators[0], "ar")
    stored, shown_joyful = {}, False
    for position in range(1, len(assignment.hit.items.all()) + 1):
        choices = dict(CHOICE.findall(page))
        assert len(choices) == 3, page[:2000]
        for value, shown in choices.items():
            expected = {"Joyful": JOYFUL_AR, "Sad": "&lt;script&gt;alert(1)&lt;/script&gt;"}.get(value, value)
            assert shown == expected
        if "Joyful" in choices:
            shown_joyful = True
            assert JOYFUL_AR_DESCRIPTION in page and f"<li>“{JOYFUL_AR_EXAMPLE}”</li>" in page
        pick = "Joyful" if "Joyful" in choices else next(iter(choices))
        url = reverse("labeling:answer_item", args=[assignment.pk, position])
        page = client.post(url, {"go": "next", "answer": pick, "seconds": "2"}, **HTMX).content.decode()
        stored[position] = pick
    assert shown_joyful
    saved = Response.objects.filter(assignment=assignment)
    assert {r.item.position: r.label.name for r in saved} == stored
    assert {r.language for r in saved} == {"ar"} and not saved.exclude(new_label_text="").exists()


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "orm"])
def test_a_researchers_name_is_escaped_everywhere_it_is_shown(campaign, annotators, settings, fast_path):
    settings.ANNOTATOR_FAST_PATH = fast_path
    _, _, page = claim_in(annotators[0], "ar")
    assert HOSTILE not in page and "<b>bold</b>" not in page
    assert 'value="Sad"> <strong dir="auto">&lt;script&gt;alert(1)&lt;/script&gt;</strong>' in other_list(page)
    assert "a &quot;quoted&quot; &lt;b&gt;bold&lt;/b&gt; claim" in page


def test_typing_the_translated_name_stores_the_label_not_the_text(campaign, annotators):
    client, assignment, _ = claim_in(annotators[0], "ar")
    url = reverse("labeling:answer_item", args=[assignment.pk, 1])
    client.post(url, {"go": "stay", "answer": "__new__", "new_label": f"  {JOYFUL_AR} "}, **HTMX)
    answer = Response.objects.get(assignment=assignment, item__position=1)
    assert (answer.label.name, answer.new_label_text, answer.language) == ("Joyful", "", "ar")
    # a pick posted with the shown name as its value names no label: refused, nothing stored
    refused = client.post(url, {"go": "stay", "answer": JOYFUL_AR}, **HTMX)
    assert refused.status_code == 200 and "bad" in refused.content.decode()
    assert Response.objects.get(assignment=assignment, item__position=1).label.name == "Joyful"
    # in English the Arabic name is only text: kept as typed, a new label
    english = Client(HTTP_ACCEPT_LANGUAGE="en")
    english.force_login(annotators[0])
    english.post(url, {"go": "stay", "answer": "__new__", "new_label": JOYFUL_AR}, **HTMX)
    answer = Response.objects.get(assignment=assignment, item__position=1)
    assert (answer.label, answer.new_label_text) == (None, JOYFUL_AR)


def test_the_names_are_read_once_per_campaign_and_forgotten_when_the_texts_change(
    campaign, annotators, monkeypatch, django_capture_on_commit_callbacks
):
    reads = []
    read = screen._read_label_set
    monkeypatch.setattr(screen, "_read_label_set", lambda campaign_id: reads.append(campaign_id) or read(campaign_id))
    client, assignment, _ = claim_in(annotators[0], "ar")
    for language in ("en", "ar", "es", "ar"):
        page = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 2]), HTTP_ACCEPT_LANGUAGE=language)
        assert page.status_code == 200
    assert reads == [campaign.pk]  # one read for every screen and language
    renamed = {"ar": {"labels": {"Joyful": {"name": "سعيد"}}}}
    with django_capture_on_commit_callbacks(execute=True):
        change_campaign_settings(campaign, {"study_flow": {"translations": renamed}})
    page = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1])).content.decode()
    assert reads == [campaign.pk, campaign.pk]
    assert '<strong dir="auto">سعيد</strong>' in other_list(page) and JOYFUL_AR not in page
    assert 'value="Sad"> <strong dir="auto">Sad</strong>' in other_list(page)  # its version is gone


def test_the_review_and_the_quiz_feedback_name_the_labels_in_the_participants_language(campaign, annotators):
    client, assignment, _ = claim_in(annotators[0], "ar")
    items = list(assignment.hit.items.order_by("position"))
    quiz = next(item for item in items if item.is_quiz)
    gold = quiz.quiz_question.gold_label.name
    wrong = next(choice for choice in quiz.choices if choice != gold)
    versions = {name: {"name": f"{name} بالعربية"} for name in {gold, wrong}} | LABELS_AR
    change_campaign_settings(campaign, {"study_flow": {"translations": {"ar": {"labels": versions}}}})
    for item in items:
        pick = wrong if item.is_quiz else ("Joyful" if "Joyful" in item.choices else item.choices[0])
        client.post(
            reverse("labeling:answer_item", args=[assignment.pk, item.position]), {"go": "stay", "answer": pick}, **HTMX
        )
    review = client.get(reverse("labeling:assignment_review", args=[assignment.pk])).content.decode()
    assert f"<strong>{wrong} بالعربية</strong>" in review and f"<strong>{wrong}</strong>" not in review
    assert client.post(reverse("labeling:assignment_submit", args=[assignment.pk])).status_code == 302
    feedback = client.get(reverse("labeling:assignment_feedback", args=[assignment.pk])).content.decode()
    assert f'<strong class="bad">{wrong} بالعربية</strong>' in feedback
    assert f'<strong class="ok gold">{gold} بالعربية</strong>' in feedback
    assert Response.objects.get(assignment=assignment, item=quiz).label.name == wrong  # stored: the label's own


def test_the_qualification_check_names_the_labels_in_the_participants_language(campaign):
    translation.activate("ar")
    check = {"assignment": Assignment(hit=campaign.hits.first()), "position": 1, "total": 2, "text": "Hi"}
    page = render_to_string("labeling/partials/quiz_check.html", check | {"check": {"correct": False},
                            "given": "Joyful", "gold": "Sad"})  # fmt: skip
    assert f'<strong class="bad">{JOYFUL_AR}</strong>' in page
    assert '<strong class="ok gold">&lt;script&gt;alert(1)&lt;/script&gt;</strong>' in page
    translation.activate("en")
    page = render_to_string(
        "labeling/partials/quiz_check.html", check | {"check": {"correct": True}, "given": "Joyful"}
    )
    assert "<strong>Joyful</strong>" in page
