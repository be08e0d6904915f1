"""Labels typed through "Other": one spelling per label, and no text that reads as another. Pure.

A typed label is stored in NFKC form with its white space collapsed (`clean_label_text`), so a
fullwidth "Ｓａｄ" or a ligature is the label it spells. Text the eye cannot check is refused with
a message: direction controls (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C) reorder what
is shown; invisible characters (every format character and every Default_Ignorable_Code_Point:
zero-width spaces and joiners, variation selectors, the combining grapheme joiner U+034F, tags)
and blank letters (Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the braille blank U+2800) make
"Sad" and "Sad" two strings; unassigned and private-use code points show nothing anyone can
check. What is left can still *look* like a label it is not: Cyrillic "а" in "Sаd", Lisu "ꓢ",
small capitals "ꜱᴀᴅ". `look_alike_key` folds such spellings into one key, from UTS #39's skeleton
with Unicode's confusables data (labeling.crowd.uts39, https://www.unicode.org/reports/tr39/) and
case, marks and small capitals besides; `look_alike_of` names the existing label a proposal
resembles, and `mixed_scripts` names the scripts of one that mixes them past UTS #39's Highly
Restrictive level (Latin with Cyrillic, Greek, Lisu, Cherokee, Armenian...), so the researcher
sees both before accepting it, and neither can be accepted (labeling.reports.campaign.review_proposal).
"""

import re
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache

from annotation.taxonomy import normalise_label_name
from labeling.crowd import uts39

MAX_LENGTH = 64
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
# Letters and symbols drawn as an empty cell: the braille blank and the musical null notehead (no
# Unicode property names them), and the Hangul fillers, which are also Default_Ignorable
BLANK_LETTERS = frozenset("\u2800\U0001d159\u115f\u1160\u3164\uffa0")
# Unassigned, private-use and surrogate code points: no one can say what they show
_NO_MEANING = frozenset({"Cn", "Co", "Cs"})
# a fold's output is folded again until nothing changes (a prototype can be a capital or a small
# capital: Lisu ꓢ -> S -> s, Cyrillic т -> ᴛ -> t); a few rounds reach that
_FOLD_ROUNDS = 4
_SMALL_CAPITAL = re.compile(r"(\w+) (?:LETTER SMALL CAPITAL|SMALL CAPITAL LETTER) (.+)")


class LabelTextRefused(ValueError):
    """The typed text cannot be a label; the message says why, for the person who typed it."""


def clean_label_text(text: str, *, max_length: int = MAX_LENGTH) -> str:
    """The label a person typed, as stored: NFKC, white space collapsed. Raises LabelTextRefused
    for control, direction, invisible and blank characters, unassigned and private-use code
    points, an empty text, or one over `max_length`."""
    cleaned = " ".join(unicodedata.normalize("NFKC", text or "").split())
    for char in f"{text or ''}{cleaned}":  # NFKC maps nothing to a hidden character; checked anyway
        problem = _unseen(char)
        if problem:
            raise LabelTextRefused(f"a label cannot contain {problem} (U+{ord(char):04X}); type it again by hand")
    if not cleaned:
        raise LabelTextRefused("type the new label, or pick one from the list")
    if len(cleaned) > max_length:
        raise LabelTextRefused(f"a label can be at most {max_length} characters long")
    return cleaned


def _unseen(char: str) -> str:
    """What is wrong with a character in a label ("" when nothing)."""
    if char in BIDI_CONTROLS:
        return "a text-direction control"
    if char in BLANK_LETTERS:
        return "a blank letter"
    if char in ZERO_WIDTH or unicodedata.category(char) == "Cf" or uts39.default_ignorable(char):
        return "an invisible character"
    if char == "\x00":
        return "a NUL byte"
    if unicodedata.category(char) == "Cc" and char not in "\t\n\r":
        return "a control character"
    if unicodedata.category(char) in _NO_MEANING:
        return "a character Unicode gives no meaning (unassigned or private use)"
    return ""


@lru_cache(maxsize=4096)  # a report compares every proposal with every label's key
def look_alike_key(text: str) -> str:
    """One key for every spelling that reads alike. UTS #39's skeleton (labeling.crowd.uts39:
    Unicode's confusables data) with what this project also calls one label folded in, round after
    round until nothing changes: compatibility forms (NFKC: width, mathematical letters), case (a
    label is case-blind, so capital I, small i, l and 1 are one letter), small capitals (read as
    their letter), accents and other combining marks, invisible and blank characters, spacing."""
    key = unicodedata.normalize("NFKC", text)
    for _ in range(_FOLD_ROUNDS):
        folded = _fold(key)
        if folded == key:
            break
        key = folded
    return " ".join(key.split())


def _fold(text: str) -> str:
    text = "".join(_small_capitals().get(c, c) for c in text.casefold())
    shown = "".join(c for c in uts39.skeleton(text) if not unicodedata.combining(c) and not _unseen(c))
    return unicodedata.normalize("NFKC", shown).casefold().replace("i", "l")


@cache
def _small_capitals() -> dict[str, str]:
    """Each small capital letter (ᴀ LATIN LETTER SMALL CAPITAL A) -> its small letter, by name.
    confusables.txt maps a few (ꜱ) and uses others as prototypes (Cyrillic т -> ᴛ); a case-blind
    label reads every one as its letter."""
    table = {}
    for point in range(0x20000):  # the planes letters are in; once, about 70 ms
        name = unicodedata.name(chr(point), "")
        match = _SMALL_CAPITAL.fullmatch(name) if "SMALL CAPITAL" in name else None
        if match:
            script, letter = match.groups()
            for form in (f"{script} SMALL LETTER {letter}", f"{script} CAPITAL LETTER {letter}"):
                try:
                    table[chr(point)] = unicodedata.lookup(form).casefold()
                    break
                except KeyError:
                    continue
    return table


def look_alike_of(text: str, label_names: Iterable[str]) -> str | None:
    """The existing label `text` reads like without being it (another spelling under
    normalise_label_name after NFKC), or None: "Sаd" (Cyrillic а) -> "Sad"; "sad" -> None."""
    own = normalise_label_name(unicodedata.normalize("NFKC", text))
    key = look_alike_key(text)
    for name in label_names:
        if look_alike_key(name) == key and normalise_label_name(name) != own:
            return name
    return None


def mixed_scripts(text: str) -> list[str]:
    """The scripts of a label that mixes them past UTS #39's Highly Restrictive level (Latin with
    Cyrillic, Greek, Lisu, Cherokee, Armenian...: a look-alike in the making), by name; [] for a
    text in one script, or Latin with Han and kana, Bopomofo or Hangul."""
    cleaned = unicodedata.normalize("NFKC", text)
    return uts39.scripts_of(cleaned) if uts39.scripts_mixed(cleaned) else []


def visible(text: str) -> str:
    """`text` safe to show on a page: every control, direction or invisible character written as
    its code point ("Sad<U+200B>"), so a refusal shows what it refuses without obeying it."""
    return "".join(f"<U+{ord(c):04X}>" if _unseen(c) else c for c in text)


def odd_letters(text: str, label_name: str) -> list[str]:
    """The characters of `text` that are not in `label_name` as written, named ("а U+0430
    CYRILLIC SMALL LETTER A"): what makes a look-alike differ from the label it resembles."""
    own = set(label_name)
    odd = dict.fromkeys(c for c in unicodedata.normalize("NFKC", text) if c not in own and not c.isspace())
    return [f"{c} U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in odd]
