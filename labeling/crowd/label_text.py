"""Labels typed through "Other": one spelling per label, and no text that reads as another. Pure.

A typed label is stored in NFKC form with its white space collapsed (`clean_label_text`), so a
fullwidth "Ｓａｄ" or a ligature is the label it spells. Text the eye cannot check is refused with
a message: direction controls (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C) reorder what
is shown, and invisible characters (U+200B-200D, U+2060, U+FEFF, and every other format
character) make "Sad" and "Sad" two strings. What is left can still *look* like a label it is not:
Cyrillic "а" in "Sаd". `skeleton` folds such look-alikes (case, width, accents, letters of other
scripts that look Latin, "rn" for "m", "1" and "I" for "l") into one key, and `look_alike_of`
names the existing label a proposal resembles, so the researcher sees it before accepting it.
"""

import unicodedata
from collections.abc import Iterable

from annotation.taxonomy import normalise_label_name

MAX_LENGTH = 64
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")

# Letters of other scripts (after case folding) drawn like a Latin letter, and Latin letters that
# pass for another: a short, hand-checked subset of Unicode's confusables (UTS #39) for the
# characters a label name is written with.
_CONFUSABLE = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "ь": "b", "е": "e", "ё": "e", "һ": "h", "н": "h", "і": "l", "ї": "l",
        "ӏ": "l", "ј": "j", "к": "k", "м": "m", "п": "n", "о": "o", "р": "p", "ԛ": "q", "г": "r",
        "ѕ": "s", "т": "t", "у": "y", "ү": "y", "х": "x", "ԁ": "d", "ԝ": "w", "с": "c",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "l", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "ω": "w", "γ": "y",
        # Latin and digits that pass for a letter
        "ı": "l", "i": "l", "1": "l", "|": "l", "ł": "l", "0": "o", "ø": "o", "đ": "d", "ħ": "h",
    }
)  # fmt: skip
_CONFUSABLE_PAIRS = (("rn", "m"), ("vv", "w"))


class LabelTextRefused(ValueError):
    """The typed text cannot be a label; the message says why, for the person who typed it."""


def clean_label_text(text: str, *, max_length: int = MAX_LENGTH) -> str:
    """The label a person typed, as stored: NFKC, white space collapsed. Raises LabelTextRefused
    for control, direction and invisible characters, an empty text, or one over `max_length`."""
    for char in text or "":
        problem = _unseen(char)
        if problem:
            raise LabelTextRefused(f"a label cannot contain {problem} (U+{ord(char):04X}); type it again by hand")
    cleaned = " ".join(unicodedata.normalize("NFKC", text or "").split())
    if not cleaned:
        raise LabelTextRefused("type the new label, or pick one from the list")
    if len(cleaned) > max_length:
        raise LabelTextRefused(f"a label can be at most {max_length} characters long")
    return cleaned


def _unseen(char: str) -> str:
    """What is wrong with a character in a label ("" when nothing)."""
    if char in BIDI_CONTROLS:
        return "a text-direction control"
    if char in ZERO_WIDTH or unicodedata.category(char) == "Cf":
        return "an invisible character"
    if char == "\x00":
        return "a NUL byte"
    if unicodedata.category(char) == "Cc" and char not in "\t\n\r":
        return "a control character"
    return ""


def skeleton(text: str) -> str:
    """One key for every spelling that looks alike: width and compatibility forms (NFKC), case,
    accents, look-alike letters of other scripts, invisible characters and spacing all folded."""
    folded = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    visible = "".join(c for c in folded if not unicodedata.combining(c) and not _unseen(c))
    key = " ".join(visible.translate(_CONFUSABLE).split())
    for pair, letter in _CONFUSABLE_PAIRS:
        key = key.replace(pair, letter)
    return key


def look_alike_of(text: str, label_names: Iterable[str]) -> str | None:
    """The existing label `text` looks like without being it (another spelling under
    normalise_label_name after NFKC), or None: "Sаd" (Cyrillic а) -> "Sad"; "sad" -> None."""
    own = normalise_label_name(unicodedata.normalize("NFKC", text))
    key = skeleton(text)
    for name in label_names:
        if skeleton(name) == key and normalise_label_name(name) != own:
            return name
    return None


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
