"""Issue 34's row "labels typed through Other": right-to-left overrides, zero-width characters,
homoglyphs and fullwidth forms were stored, and accepting "Sad" + a zero-width space made a second
label that reads "Sad". Now a typed label is stored in NFKC form, direction controls and invisible
characters are refused with a message, and a look-alike of an existing label is flagged on the
dashboard and refused on the accept page, which names the label it resembles."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from annotation.taxonomy import TAXONOMY
from labeling.crowd.label_text import (
    BIDI_CONTROLS,
    ZERO_WIDTH,
    LabelTextRefused,
    clean_label_text,
    look_alike_key,
    look_alike_of,
    visible,
)
from labeling.models import Response
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign
from tests.labeling.page_walk import NEW_LABEL, answer_screen, claim, screen_items, submit, walk

# --- The pure rules (no database) ----------------------------------------------------------------


@pytest.mark.parametrize("char", sorted(BIDI_CONTROLS | ZERO_WIDTH | {"\u00ad", "\u2061", "\x00", "\x1b"}))
def test_direction_controls_and_invisible_characters_are_refused_by_name(char):
    with pytest.raises(LabelTextRefused, match=f"U\\+{ord(char):04X}"):
        clean_label_text(f"Sa{char}d")


@pytest.mark.parametrize(
    ("typed", "stored"),
    [("Ｓａｄ", "Sad"), ("  Mildly \t amused ", "Mildly amused"), ("ﬁery", "fiery"), ("Sad\u00a0ish", "Sad ish")],
)
def test_a_typed_label_is_stored_in_nfkc_with_its_spaces_collapsed(typed, stored):
    assert clean_label_text(typed) == stored


@pytest.mark.parametrize(
    ("typed", "resembles"),
    [
        ("Sаd", "Sad"),  # Cyrillic а
        ("SΑD", "Sad"),  # Greek capital alpha
        ("Sad\u200b", "Sad"),  # invisible: reads as Sad
        ("Jоyful", "Joyful"),  # Cyrillic о
        ("Surprlsed", "Surprised"),  # l for i
        ("Ashamed", None),  # the label itself, in its own spelling
        ("ashamed", None),  # case aside, the label itself: no look-alike, the same label
        ("Ｓａｄ", None),  # width aside, the same label
        ("Mildly amused", None),  # a new label like no other
    ],
)
def test_look_alikes_of_an_existing_label_are_named(typed, resembles):
    assert look_alike_of(typed, ["Sad", "Joyful", "Surprised", "Ashamed"]) == resembles


def test_no_two_labels_of_the_taxonomy_look_alike():
    keys = [look_alike_key(spec.name) for spec in TAXONOMY]
    assert len(set(keys)) == len(keys) == 41


def test_a_refused_text_is_shown_with_its_code_points():
    assert visible("\u202eSad\u200b") == "<U+202E>Sad<U+200B>"


# --- Through the pages ----------------------------------------------------------------------------


@pytest.fixture
def campaign(db, settings):
    settings.QUIZ_DEMO_BANK = True  # quiz screens from the built-in one-turn bank
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1, workers_per_hit=3)
    build_hits(campaign, make_dialogues(3), seed=5)
    return campaign


@pytest.fixture
def annotator(campaign, annotators):
    browser = Client()
    browser.force_login(annotators[0])
    return browser, claim(browser, campaign)


def first_work_screen(assignment) -> int:
    return next(p for p, item in sorted(screen_items(assignment).items()) if not item.is_quiz)


@pytest.mark.parametrize(
    "typed",
    ["Sad\u200b", "\u202eSad", "S\u2066ad\u2069", "\ufeffSad", "Sa\u200dd"]
    # issue 46: a variation selector, the combining grapheme joiner, a Hangul filler, the braille blank
    + ["Sa\ufe0fd", "S\u034fad", "Sad\u3164", "Sad\u2800"],
)
def test_a_typed_label_with_hidden_characters_is_refused_on_the_screen(annotator, typed):
    browser, assignment = annotator
    position = first_work_screen(assignment)
    response = answer_screen(browser, assignment, position, NEW_LABEL, typed)
    assert response.status_code == 302  # back to the screen, with the message
    page = browser.get(response["Location"]).content.decode()
    assert "new_label_text: A label cannot contain" in page and f"U+{ord(typed.strip('Sad')[0]):04X}" in page
    assert not Response.objects.filter(assignment=assignment).exists()


def test_a_fullwidth_label_is_the_label_it_spells(annotator):
    browser, assignment = annotator
    position = first_work_screen(assignment)
    assert answer_screen(browser, assignment, position, NEW_LABEL, "ＮＯＳＴＡＬＧＩＣ").status_code == 302
    response = Response.objects.get(assignment=assignment)
    assert (response.label.name, response.new_label_text) == ("Nostalgic", "")


def propose_homoglyph(campaign, annotators, researcher, typed: str = "Sаd") -> Client:
    """Two annotators type `typed` ("Sаd", Cyrillic а) on every work screen and submit; the researcher's client."""
    for user in annotators[:2]:
        browser = Client()
        browser.force_login(user)
        assignment = claim(browser, campaign)

        def homoglyph(item):
            return (item.quiz_question.gold_label.name, "") if item.is_quiz else (NEW_LABEL, typed)

        walk(browser, assignment, pick=homoglyph)
        submit(browser, assignment)
    staff = Client()
    staff.force_login(researcher)
    return staff


def test_a_homoglyph_proposal_is_flagged_and_refused_on_the_accept_page(campaign, annotators, researcher):
    staff = propose_homoglyph(campaign, annotators, researcher)
    assert Response.objects.filter(new_label_text="Sаd", label__isnull=True).count() == 6  # kept as typed
    report = staff.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    assert "looks like “Sad”" in report and "mixes Latin and Cyrillic" in report

    labels_before = Label.objects.count()
    back = reverse("labeling:campaign_detail", args=[campaign.pk])
    page = staff.post(reverse("labeling:label_accept"), {"text": "Sаd", "next": back})
    html = page.content.decode()
    assert page.status_code == 409
    assert "Looks like “Sad”" in html and "U+0430 CYRILLIC SMALL LETTER A" in html and back in html
    confirmed = staff.post(reverse("labeling:label_accept"), {"text": "Sаd", "confirm": "yes"})
    assert confirmed.status_code == 409 and Label.objects.count() == labels_before


@pytest.mark.parametrize("text", ["Sad\u200b", "\u202eSad", "Sad\u2060"])
def test_accepting_sad_with_a_hidden_character_makes_no_second_sad(db, researcher, text):
    staff = Client()
    staff.force_login(researcher)
    reads_sad = [label for label in Label.objects.all() if look_alike_key(label.name) == "sad"]
    page = staff.post(reverse("labeling:label_accept"), {"text": text, "confirm": "yes"})
    assert page.status_code == 400 and "U+" in page.content.decode()
    api = staff.post(reverse("api-label-accept"), {"text": text}, content_type="application/json")
    assert api.status_code == 400 and "U+" in api.json()["text"][0]
    assert [label for label in Label.objects.all() if look_alike_key(label.name) == "sad"] == reads_sad


def test_accepting_a_fullwidth_spelling_returns_the_label_it_names(db, researcher):
    staff = Client()
    staff.force_login(researcher)
    before = Label.objects.count()
    asked = staff.post(reverse("labeling:label_accept"), {"text": "ＳＡＤ"})
    assert asked.status_code == 200 and "It is the label Sad already" in asked.content.decode()
    staff.post(reverse("labeling:label_accept"), {"text": "ＳＡＤ", "confirm": "yes"})
    assert Label.objects.count() == before


def test_a_new_label_is_accepted_in_nfkc(db, researcher):
    staff = Client()
    staff.force_login(researcher)
    staff.post(reverse("labeling:label_accept"), {"text": " Ｆｏｒｇｅｔｆｕｌ ", "confirm": "yes"})
    assert Label.objects.get(kind=Label.PROPOSED).name == "Forgetful"


@pytest.mark.parametrize(
    ("typed", "label"),
    [("ꜱᴀᴅ", "Sad"), ("ꓑroud", "Proud"), ("ᏚᎪᎠ", "Sad"), ("Prօud", "Proud"), ("ᴀɴɢʀʏ", "Angry")],
)
def test_issue_46s_look_alikes_typed_by_annotators_are_flagged_and_refused(
    campaign, annotators, researcher, typed, label
):
    """Small capitals, Lisu, Cherokee and Armenian letters: typed through Other by the crowd, shown
    on the report as looking like the label, and refused on the accept page (issue 46)."""
    staff = propose_homoglyph(campaign, annotators, researcher, typed)
    assert Response.objects.filter(new_label_text=typed, label__isnull=True).count() == 6
    report = staff.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    assert f"looks like “{label}”" in report
    before = Label.objects.count()
    page = staff.post(reverse("labeling:label_accept"), {"text": typed, "confirm": "yes"})
    assert page.status_code == 409 and f"Looks like “{label}”" in page.content.decode()
    assert Label.objects.count() == before
