"""Issue 46's row "look-alike labels": typed through Other and accepted by a researcher, 14 of 14
look-alikes became labels that read exactly like "Sad", "Proud" or "Angry" (variation selectors,
the combining grapheme joiner, Hangul fillers, the braille blank, Lisu/Cherokee/Armenian letters,
small capitals). Now a label is compared by UTS #39's skeleton with Unicode's confusables data
(https://www.unicode.org/reports/tr39/), default-ignorable characters and blank letters are
refused, and so are labels that mix scripts past UTS #39's Highly Restrictive level. Honest new
labels written wholly in another script are still accepted."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from labeling.crowd import uts39
from labeling.crowd.label_text import (
    LabelTextRefused,
    clean_label_text,
    look_alike_key,
    look_alike_of,
    mixed_scripts,
)
from labeling.reports.campaign import review_proposal

# (typed, the label it reads as): each a kind of look-alike the red team used, or one more
LOOK_ALIKES = [
    ("Sa\ufe0fd", "Sad"),  # variation selector 16
    ("Pro\U000e0100ud", "Proud"),  # variation selector 17 (supplement)
    ("An\u034fgry", "Angry"),  # combining grapheme joiner
    ("Sad\u3164", "Sad"),  # Hangul filler
    ("Pr\uffa0oud", "Proud"),  # halfwidth Hangul filler
    ("\u115fAngry", "Angry"),  # Hangul choseong filler
    ("Sa\u1160d", "Sad"),  # Hangul jungseong filler
    ("Angry\u2800", "Angry"),  # braille pattern blank
    ("Sad\U000e0020", "Sad"),  # tag space
    ("Pro\u180eud", "Proud"),  # Mongolian vowel separator
    ("Sa\u17b4d", "Sad"),  # Khmer inherent vowel (default-ignorable)
    ("ꓢꓮꓓ", "Sad"),  # Lisu letters, the whole word
    ("ꓑroud", "Proud"),  # a Lisu letter among Latin ones
    ("ꓮꓠꓖꓣꓬ", "Angry"),  # Lisu
    ("ᏚᎪᎠ", "Sad"),  # Cherokee letters, the whole word
    ("ᏢᏒᎾᏌᎠ", "Proud"),  # Cherokee
    ("Ꮪad", "Sad"),  # a Cherokee letter among Latin ones
    ("Prօud", "Proud"),  # Armenian oh
    ("Jօyful", "Joyful"),  # Armenian oh
    ("ꜱᴀᴅ", "Sad"),  # small capitals
    ("ᴘʀᴏᴜᴅ", "Proud"),  # small capitals
    ("ᴀɴɢʀʏ", "Angry"),  # small capitals
    ("Sаd", "Sad"),  # Cyrillic a
    ("Ѕаd", "Sad"),  # Cyrillic dze and a
    ("Ρrοud", "Proud"),  # Greek capital rho and omicron
    ("Ａｎｇrу", "Angry"),  # fullwidth letters with a Cyrillic u
    ("𝐒𝛂𝐝", "Sad"),  # mathematical bold letters, one of them Greek alpha
    ("Sɑd", "Sad"),  # Latin alpha
    ("Nostаlgic", "Nostalgic"),  # Cyrillic a
    ("Surprіsed", "Surprised"),  # Cyrillic i
]
# honest new labels, each a whole word of another script
HONEST = ["غاضب", "悲伤", "嬉しい", "उदास", "슬픔", "Грусть", "Χαρά", "Happy 幸せ"]


# --- The pure rules (no database) ----------------------------------------------------------------


def test_the_confusables_data_is_unicodes_own_file():
    header = uts39.confusables_path().read_text(encoding="utf-8-sig")[:600]
    assert "Unicode Security Mechanisms for UTS #39" in header
    assert uts39.data_version().count(".") == 2 and len(uts39.prototypes()) > 6000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("paypal", "paypal"),
        ("pаypаl", "paypal"),  # Cyrillic a: the standard's own example of a confusable
        ("m", "rn"),  # a prototype may be two letters
        ("ꓢꓮꓓ", "SAD"),  # case is kept by the standard's skeleton
        ("𝐒", "S"),
    ],
)
def test_the_skeleton_is_uts39s(text, expected):
    assert uts39.skeleton(text) == expected


@pytest.mark.parametrize(("typed", "label"), LOOK_ALIKES)
def test_each_look_alike_reads_as_the_label(typed, label):
    assert look_alike_key(typed) == look_alike_key(label)
    assert look_alike_of(typed, [label, "Joyful", "Content"]) == label


@pytest.mark.parametrize("char", ["\ufe0f", "\U000e0100", "\u034f", "\u200d", "\u180e", "\U000e0041", "\u17b4"])
def test_default_ignorable_characters_are_refused_by_name(char):
    assert uts39.default_ignorable(char)
    with pytest.raises(LabelTextRefused, match=f"invisible character \\(U\\+{ord(char):04X}\\)"):
        clean_label_text(f"Sa{char}d")


# Default_Ignorable_Code_Point as Unicode's DerivedCoreProperties.txt lists it (Unicode 15.0 on):
# https://www.unicode.org/Public/UCD/latest/ucd/DerivedCoreProperties.txt
DEFAULT_IGNORABLE_RANGES = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
]  # fmt: skip


def test_every_default_ignorable_code_point_of_the_standard_is_refused():
    points = [chr(p) for first, last in DEFAULT_IGNORABLE_RANGES for p in range(first, last + 1)]
    assert len(points) == 4174 and all(uts39.default_ignorable(char) for char in points)
    refused = 0
    for char in points:
        with pytest.raises(LabelTextRefused, match=f"U\\+{ord(char):04X}"):
            clean_label_text(f"Sa{char}d")
        refused += 1
    assert refused == len(points) and not uts39.default_ignorable("a") and not uts39.default_ignorable(" ")


@pytest.mark.parametrize("char", ["\u3164", "\uffa0", "\u115f", "\u1160", "\u2800", "\U0001d159"])
def test_blank_letters_are_refused_by_name(char):
    with pytest.raises(LabelTextRefused, match=f"blank letter \\(U\\+{ord(char):04X}\\)"):
        clean_label_text(f"Sad{char}")


@pytest.mark.parametrize("char", ["\ue000", "\U000f0000", "\U0001fbff"])
def test_private_use_and_unassigned_code_points_are_refused(char):
    with pytest.raises(LabelTextRefused, match="no meaning"):
        clean_label_text(f"Sad{char}")


@pytest.mark.parametrize(
    ("text", "scripts"),
    [
        ("Hаppy", ["Latin", "Cyrillic"]),
        ("Hαppy", ["Latin", "Greek"]),
        ("ꓧappy", ["Lisu", "Latin"]),
        ("Ꮋappy", ["Cherokee", "Latin"]),
        ("Հappy", ["Armenian", "Latin"]),
        ("Happy", []),
        ("Грусть", []),
        ("Happy 幸せ", []),  # Latin with Han and Hiragana: Highly Restrictive
        ("Happy 기쁨", []),  # Latin with Hangul
        ("기쁨 喜", []),  # Hangul with Han: Korean
        ("Грусть 悲", ["Cyrillic", "Han"]),
    ],
)
def test_mixed_scripts_past_highly_restrictive_are_named(text, scripts):
    assert mixed_scripts(text) == scripts


@pytest.mark.parametrize("word", HONEST)
def test_an_honest_word_of_another_script_reads_as_no_label(word):
    assert look_alike_of(word, ["Sad", "Proud", "Angry", "Joyful", "Nostalgic", "Surprised"]) is None
    assert mixed_scripts(word) == [] and clean_label_text(word) == word


# --- Through the researcher's accept page and the API ----------------------------------------------


@pytest.fixture
def staff(db, researcher):
    client = Client()
    client.force_login(researcher)
    return client


@pytest.mark.parametrize(("typed", "label"), LOOK_ALIKES)
def test_a_look_alike_is_refused_on_the_accept_page_naming_the_label(staff, typed, label):
    before = Label.objects.count()
    asked = staff.post(reverse("labeling:label_accept"), {"text": typed})
    confirmed = staff.post(reverse("labeling:label_accept"), {"text": typed, "confirm": "yes"})
    for page in (asked, confirmed):
        html = page.content.decode()
        assert page.status_code in (400, 409)
        assert f"Looks like “{label}”" in html or f"reads as the label “{label}”" in html
    assert Label.objects.count() == before


@pytest.mark.parametrize(("typed", "label"), LOOK_ALIKES)
def test_a_look_alike_is_refused_by_the_api_naming_the_label(staff, typed, label):
    before = Label.objects.count()
    answer = staff.post(reverse("api-label-accept"), {"text": typed}, content_type="application/json")
    assert answer.status_code == 400
    assert f"“{label}”" in answer.json()["text"][0]
    assert Label.objects.count() == before


@pytest.mark.parametrize("typed", ["Hаppy", "Ꮋappy", "Հappy"])
def test_a_mixed_script_label_is_refused_naming_its_scripts(staff, typed):
    page = staff.post(reverse("labeling:label_accept"), {"text": typed, "confirm": "yes"})
    assert page.status_code == 400 and "mixes letters of" in page.content.decode()
    assert not Label.objects.filter(kind=Label.PROPOSED).exists()


@pytest.mark.parametrize("typed", ["Ａｎｇｒｙ", "𝐀𝐧𝐠𝐫𝐲", "ⓐⓝⓖⓡⓨ"])
def test_a_compatibility_spelling_is_the_label_itself_never_a_second_one(staff, typed):
    before = Label.objects.count()
    asked = staff.post(reverse("labeling:label_accept"), {"text": typed})
    assert asked.status_code == 200 and "It is the label Angry already" in asked.content.decode()
    staff.post(reverse("labeling:label_accept"), {"text": typed, "confirm": "yes"})
    api = staff.post(reverse("api-label-accept"), {"text": typed}, content_type="application/json")
    assert api.status_code == 201 and api.json()["name"] == "Angry"
    assert Label.objects.count() == before


@pytest.mark.parametrize("word", HONEST)
def test_an_honest_label_in_another_script_is_accepted(staff, word):
    assert review_proposal(word).refusal == ""
    staff.post(reverse("labeling:label_accept"), {"text": word, "confirm": "yes"})
    assert Label.objects.get(kind=Label.PROPOSED).name == word


def test_an_honest_label_in_another_script_is_accepted_by_the_api(staff):
    answer = staff.post(reverse("api-label-accept"), {"text": "悲伤"}, content_type="application/json")
    assert answer.status_code == 201 and Label.objects.get(kind=Label.PROPOSED).name == "悲伤"
