"""Cleaning rules: what is stripped from a line, and which turns end a dialogue.

Every rule can be switched off (`CleaningRules.without(...)`) and every removal is counted under the
rule's name, so a file's `removed_by_rule` explains where its text went.
"""

import re
import string
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace

LINE_RULES = ("speaker_name", "sound_cue", "advert")
TURN_RULES = ("previously_on", "too_short", "too_long", "non_alphabetic", "repeated_tokens", "repeated_turn")
DIALOGUE_RULES = ("too_few_turns", "documentary")
RULE_NAMES = LINE_RULES + TURN_RULES + DIALOGUE_RULES
# Counted, not a switch: turns dropped because an earlier turn of their dialogue was removed.
AFTER_REMOVED_TURN = "after_removed_turn"


@dataclass(frozen=True, slots=True)
class CleaningRules:
    speaker_name: bool = True
    sound_cue: bool = True
    advert: bool = True
    previously_on: bool = True
    too_short: bool = True
    too_long: bool = True
    non_alphabetic: bool = True
    repeated_tokens: bool = True
    repeated_turn: bool = True
    too_few_turns: bool = True
    documentary: bool = True
    min_chars: int = 2
    max_chars: int = 100
    min_alpha_ratio: float = 0.6
    min_distinct_token_ratio: float = 0.5
    min_tokens_for_repetition: int = 4
    min_dialogue_turns: int = 2

    @classmethod
    def without(cls, names: Iterable[str]) -> "CleaningRules":
        """All rules on except `names`; an unknown name is an error, not a silent no-op."""
        names = list(names)
        unknown = sorted(set(names) - set(RULE_NAMES))
        if unknown:
            raise ValueError(f"unknown cleaning rule(s) {', '.join(unknown)}; known: {', '.join(RULE_NAMES)}")
        return replace(cls(), **dict.fromkeys(names, False))

    def disabled(self) -> list[str]:
        return [f.name for f in fields(self) if f.name in RULE_NAMES and not getattr(self, f.name)]


_MARKUP = re.compile(r"<[^>]*>|\{\\[^}]*\}")
# An upper-case name of two or more characters before a colon: "JOHN:", "MAN 2:", "DR. HALE:".
_SPEAKER = re.compile(r"^[A-Z][A-Z0-9 .'\-]{1,30}:(?:\s+|$)")
_SOUND = re.compile(r"\[[^\]]*(?:\]|$)|\([^)]*(?:\)|$)")
_ADVERT = re.compile(
    r"opensubtitles|addic7ed|podnapisi|subscene|www\.|https?://|\w\.(?:com|org|net)\b"
    r"|\b(?:subtitles?|subs|captions?|captioning|sync(?:ed|hronized)?|resync(?:ed)?|corrections?|corrected"
    r"|translat(?:ed|ion)|ripped|encoded|transcript)\s+(?:and\s+\w+\s+)?by\b"
    r"|support us and become vip|advertise your product"
)
_DASHES = "-‐–"
_DROP_ASCII_LETTERS_AND_SPACES = str.maketrans("", "", string.ascii_letters + " ")


def strip_markup(text: str) -> str:
    """HTML/font tags and ASS overrides ({\\an8}); a reader quirk, not a rule, so always on."""
    if "<" in text or "{" in text:
        return _MARKUP.sub("", text)
    return text


def is_advert(text: str, rules: CleaningRules, removed: Counter) -> bool:
    if not rules.advert:
        return False
    lowered = text.lower()
    if _may_be_advert(lowered) and _ADVERT.search(lowered):
        removed["advert"] += 1
        return True
    return False


def _may_be_advert(lowered: str) -> bool:
    # Every advert pattern holds one of these strings. Plain `in` tests, written out, are several
    # times cheaper than the regex (or a loop over a tuple) on the ordinary lines that have none.
    return (
        "by" in lowered
        or "www" in lowered
        or "http" in lowered
        or ".com" in lowered
        or ".org" in lowered
        or ".net" in lowered
        or "opensub" in lowered
        or "addic7ed" in lowered
        or "podnapisi" in lowered
        or "subscene" in lowered
        or "vip" in lowered
        or "advertise" in lowered
    )


def split_dash(line: str) -> tuple[str, bool]:
    """A dash-led line is another speaker's words: return the line without the dash, and whether it had one."""
    if line and line[0] in _DASHES:
        return line.lstrip(_DASHES).lstrip(), True
    return line, False


def clean_line(line: str, rules: CleaningRules, removed: Counter) -> str:
    """Strip sound/music cues and speaker names from one stripped line; "" when nothing is left."""
    if rules.sound_cue:
        if line[0] == "#" or "♪" in line or "♫" in line:
            removed["sound_cue"] += 1
            return ""
        if "[" in line or "(" in line:
            stripped = _SOUND.sub("", line)
            if stripped != line:
                removed["sound_cue"] += 1
                line = " ".join(stripped.split())
    if rules.speaker_name and ":" in line:
        match = _SPEAKER.match(line)
        if match:
            removed["speaker_name"] += 1
            line = line[match.end() :]
    return line


def turn_removal_reason(
    text: str, tokens: list[str], normalised: str, previous: str | None, rules: CleaningRules
) -> str | None:
    """The rule that removes this turn (and with it the rest of its dialogue), or None to keep it.
    `tokens` are the case-folded words, `normalised` their join (see records.normalise_text)."""
    if rules.previously_on and normalised.startswith("previously on"):
        return "previously_on"
    length = len(text)
    if rules.too_short and length < rules.min_chars:
        return "too_short"
    if rules.too_long and length > rules.max_chars:
        return "too_long"
    if rules.non_alphabetic and _alpha_ratio(text) < rules.min_alpha_ratio:
        return "non_alphabetic"
    if rules.repeated_tokens and _mostly_repeated(tokens, rules):
        return "repeated_tokens"
    if rules.repeated_turn and normalised == previous:
        return "repeated_turn"
    return None


def _alpha_ratio(text: str) -> float:
    # Spaces do not count: "It is a go." is all words, not 36 % blanks. ASCII letters are counted
    # in C by deleting them; only the few characters left (punctuation, digits, other scripts) are
    # tested one by one.
    visible = len(text) - text.count(" ")
    if not visible:
        return 0.0
    rest = text.translate(_DROP_ASCII_LETTERS_AND_SPACES)
    letters = visible - len(rest)
    if not rest.isascii():  # letters of other scripts (é, ж) are among the rest
        letters += sum(map(str.isalpha, rest))
    return letters / visible


def _mostly_repeated(tokens: list[str], rules: CleaningRules) -> bool:
    if len(tokens) < rules.min_tokens_for_repetition:
        return False
    return len(set(tokens)) < rules.min_distinct_token_ratio * len(tokens)
