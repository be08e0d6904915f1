"""Cleaning rules: what is stripped from a line, and which turns end a dialogue.

Every rule can be switched off (`CleaningRules.without(...)`) and every removal is counted under the
rule's name, so a file's `removed_by_rule` explains where its text went.
"""

import re
import string
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace

from annotation.papers import TURN_MAX_CHARS, TURN_MIN_CHARS

LINE_RULES = (
    "markup",
    "speaker_name",
    "sound_cue",
    "song_marker",
    "title_card",
    "mid_line_dash",
    "opus_contraction",
    "advert",
)
TURN_RULES = ("previously_on", "too_short", "too_long", "non_alphabetic", "repeated_tokens", "repeated_turn")
DIALOGUE_RULES = ("too_few_turns", "documentary")
RULE_NAMES = LINE_RULES + TURN_RULES + DIALOGUE_RULES
# Counted, not a switch: turns dropped because an earlier turn of their dialogue was removed.
AFTER_REMOVED_TURN = "after_removed_turn"


@dataclass(frozen=True, slots=True)
class CleaningRules:
    markup: bool = True
    speaker_name: bool = True
    sound_cue: bool = True
    song_marker: bool = True
    title_card: bool = True
    mid_line_dash: bool = True
    opus_contraction: bool = True
    advert: bool = True
    previously_on: bool = True
    too_short: bool = True
    too_long: bool = True
    non_alphabetic: bool = True
    repeated_tokens: bool = True
    repeated_turn: bool = True
    too_few_turns: bool = True
    documentary: bool = True
    min_chars: int = TURN_MIN_CHARS
    max_chars: int = TURN_MAX_CHARS
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
# A name before a colon. Upper case ("JOHN:", "MAN 2:", "DR. HALE:") is a name whatever follows;
# mixed case ("Jack:", "Dr. Hale:") only when the words after it start a sentence, so that
# "Listen: we leave at ten." keeps its first word. A capital right after the colon, with no space
# ("MAN:Jacques, leave the windows."), is the speaker's first word too.
_SPEAKER = re.compile(
    r"^(?:[A-Z][A-Z0-9 .'\-]{1,30}:(?:\s+|$|(?=[A-Z]))"
    r"|[A-Z][a-z]+(?:\.?\s[A-Z][a-z]*){0,2}:(?:\s+(?=[^a-z\s])|$|(?=[A-Z])))"
)
# Song markers inside a line (a line starting with one is a sound cue): "#...#" is sung; an odd
# "#" ending the line closes a song begun before it, any other odd one opens a song to the line's end.
# "#1" is a number, not a marker.
_SONG_MARKER = "#(?!\\d)"
_SUNG_SPAN = re.compile(f"{_SONG_MARKER}[^#]*{_SONG_MARKER}")
_SUNG_TO_END = re.compile(f"{_SONG_MARKER}.*$")
_SUNG_FROM_START = re.compile(f"^[^#]*{_SONG_MARKER}")
# A spaced-out title card ("T I T L E  3 ..."): at least 4 one-character words, 3 in 4 of the line's.
TITLE_CARD_MIN_LETTERS = 4
# Sound cues: bracketed text, also over line breaks ("(ELECTRONIC\nMELODY)"); an opener never
# closed in the cue runs to the cue's end, and its closer is looked for at the start of the next cue.
_SOUND = re.compile(r"\[[^\]]*(?:\]|$)|\([^)]*(?:\)|$)")
# The same, with the blank before it: "Only (laughs) me." -> "Only me." with no space to collapse.
_SOUND_AND_BLANK = re.compile(r"[ \t]*(?:\[[^\]]*(?:\]|$)|\([^)]*(?:\)|$))")
_OPEN_AT_END = re.compile(r"[\[(][^\])]*$")
_CARRIED_SOUND_END = re.compile(r"^[^\[(\n]*?[\])]")
# A dash after the end of a sentence inside a line: a second speaker ("Fine. - Sure thing.").
_MID_LINE_DASH = re.compile(r"(?<=[.!?…\"'”’)\]])\s+[-‐–]\s*(?=\S)")
# Contractions an OPUS tokeniser split: "can 't", "he ' s", "do n't" -> "can't", "he's", "don't".
# In any case: a film written in capitals splits "DON 'T" and "HE 'S" the same way.
_SPLIT_CONTRACTION = re.compile(
    r"(?<=\w)(?: (['’]) ?|(['’]) )(?=(?i:s|t|m|re|ve|ll|d)\b)|(?<=\w) (?=(?i:n)['’](?i:t)\b)"
)
_ADVERT = re.compile(
    r"opensubtitles|addic7ed|podnapisi|subscene|www\.|https?://|\w\.(?:com|org|net)\b"
    r"|\b(?:subtitles?|subs|captions?|captioning|sync(?:ed|hronized)?|resync(?:ed)?|corrections?|corrected"
    r"|translat(?:ed|ion)|ripped|encoded|transcript)\s+(?:and\s+\w+\s+)?by\b"
    r"|support us and become vip|advertise your product"
)
DASHES = "-‐–"
_DROP_ASCII_LETTERS_AND_SPACES = str.maketrans("", "", string.ascii_letters + " ")
_ASCII_LETTERS_AND_SPACE_BYTES = (string.ascii_letters + " ").encode("ascii")


def strip_markup(text: str) -> str:
    """HTML/font tags, ASS overrides ({\\an8}) and ASS line breaks (\\N, \\n) and hard spaces (\\h)."""
    if "<" in text or "{" in text:
        text = _MARKUP.sub("", text)
    if "\\" in text:
        text = text.replace("\\N", "\n").replace("\\n", "\n").replace("\\h", " ")
    return text


def strip_sound_cues(text: str, carried: bool) -> tuple[str, bool, bool]:
    """(text without bracketed sound cues, whether a cue stays open into the next subtitle, whether
    anything was cut). `carried` says the previous subtitle left a cue open."""
    cut = False
    if carried:
        end = _CARRIED_SOUND_END.match(text)
        if end:
            text, cut = text[end.end() :], True
    if "[" in text or "(" in text:
        stripped = _SOUND_AND_BLANK.sub("", text)
        if stripped != text:
            return stripped, _OPEN_AT_END.search(text) is not None, True
    return text, False, cut


def split_mid_line_dashes(line: str) -> list[str]:
    """A line cut where a dash after a finished sentence starts another speaker's words."""
    if " -" in line or " –" in line or " ‐" in line:
        return _MID_LINE_DASH.split(line)
    return [line]


def join_split_contractions(text: str) -> tuple[str, int]:
    """OPUS tokens glued back: ("can't", 1) from "can 't"."""
    if "'" not in text and "’" not in text:
        return text, 0
    return _SPLIT_CONTRACTION.subn(lambda m: m.group(1) or m.group(2) or "", text)


def is_advert(text: str, rules: CleaningRules, removed: Counter) -> bool:
    if not rules.advert:
        return False
    lowered = text.lower()
    # Every advert pattern holds one of these strings. Plain `in` tests, written out here (this
    # runs once per cue), are several times cheaper than the regex (or a loop over a tuple) on the
    # ordinary lines that have none.
    if (
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
    ) and _ADVERT.search(lowered):
        removed["advert"] += 1
        return True
    return False


def split_dash(line: str) -> tuple[str, bool]:
    """A dash-led line is another speaker's words: return the line without the dash, and whether it had one."""
    if line and line[0] in DASHES:
        return line.lstrip(DASHES).lstrip(), True
    return line, False


def clean_line(line: str, rules: CleaningRules, removed: Counter) -> str:
    """Strip sound/music cues and speaker names from one stripped, non-empty line; "" when nothing is left."""
    return line_cleaner(rules, removed)(line)


def line_cleaner(rules: CleaningRules, removed: Counter) -> Callable[[str], str]:
    """`clean_line` with the switches read once: the returned function runs on every line.
    Bracketed sound cues are cut from the whole cue before (`strip_sound_cues`); what is left
    here is a song line and a cue opened on this line."""
    sound_cue, speaker_name = rules.sound_cue, rules.speaker_name
    song_marker, title_card = rules.song_marker, rules.title_card
    strip_sound, match_speaker = _SOUND.sub, _SPEAKER.match

    def clean(line: str) -> str:
        if sound_cue:
            if line[0] == "#" or "♪" in line or "♫" in line or "¶" in line:
                removed["sound_cue"] += 1
                return ""
            if "[" in line or "(" in line:
                stripped = strip_sound("", line)
                if stripped != line:
                    removed["sound_cue"] += 1
                    line = " ".join(stripped.split())
        if song_marker and "#" in line:
            unsung = cut_sung_text(line)
            if unsung != line:
                removed["song_marker"] += 1
                line = unsung
                if not line:
                    return ""
        # a card's first two words are one character each: the test most lines stop at (per line)
        if title_card and line[1:2] == " " and line[3:4] == " " and is_title_card(line):
            removed["title_card"] += 1
            return ""
        if speaker_name and ":" in line:
            match = match_speaker(line)
            if match:
                removed["speaker_name"] += 1
                line = line[match.end() :]
        return line

    return clean


def cut_sung_text(line: str) -> str:
    """The line without its sung words (see _SONG_MARKER); "" when all of it is sung."""
    unsung = _SUNG_SPAN.sub(" ", line)
    if len(re.findall(_SONG_MARKER, unsung)) % 2:
        cut = _SUNG_FROM_START if unsung.rstrip().endswith("#") else _SUNG_TO_END
        unsung = cut.sub(" ", unsung, count=1)
    return " ".join(unsung.split()) if unsung != line else line


def is_title_card(line: str) -> bool:
    """A spaced-out title card (see TITLE_CARD_MIN_LETTERS)."""
    words = line.split()
    letters = sum(1 for word in words if len(word) == 1 and word.isalnum())
    return letters >= TITLE_CARD_MIN_LETTERS and letters * 4 >= len(words) * 3


def turn_rule_check(rules: CleaningRules) -> Callable[[str, list[str], list[str] | None], str | None]:
    """The turn rules compiled into one function: `check(text, tokens, previous_tokens)` names the
    rule that removes this turn (and with it the rest of its dialogue), or returns None to keep it.
    `tokens` are the case-folded words (`normalise_text` is their join, so equal token lists mean
    equal normalised text), `previous_tokens` those of the dialogue's last kept turn, or None.
    It runs once per turn, so the switches and thresholds are read once here, not on every call."""
    previously_on, repeated_turn = rules.previously_on, rules.repeated_turn
    min_chars = rules.min_chars if rules.too_short else -1
    max_chars = rules.max_chars if rules.too_long else float("inf")
    non_alphabetic, min_alpha_ratio = rules.non_alphabetic, rules.min_alpha_ratio
    min_tokens = rules.min_tokens_for_repetition if rules.repeated_tokens else float("inf")
    min_distinct = rules.min_distinct_token_ratio
    drop_ascii, drop_ascii_bytes = _DROP_ASCII_LETTERS_AND_SPACES, _ASCII_LETTERS_AND_SPACE_BYTES

    def check(text: str, tokens: list[str], previous_tokens: list[str] | None) -> str | None:
        # normalised.startswith("previously on"), read from the tokens without joining them.
        if previously_on and tokens and tokens[0] == "previously" and len(tokens) > 1 and tokens[1][:2] == "on":
            return "previously_on"
        length = len(text)
        if length < min_chars:
            return "too_short"
        if length > max_chars:
            return "too_long"
        if non_alphabetic:
            # Spaces do not count: "It is a go." is all words, not 36 % blanks. ASCII letters are
            # counted in C by deleting them (bytes.translate, several times faster than
            # str.translate, for the ASCII lines that are nearly all); only the few characters
            # left (punctuation, digits, other scripts) are tested one by one.
            visible = length - text.count(" ")
            if visible:
                if text.isascii():
                    letters = visible - len(text.encode("ascii").translate(None, drop_ascii_bytes))
                else:
                    rest = text.translate(drop_ascii)
                    letters = visible - len(rest) + sum(map(str.isalpha, rest))  # é, ж are among the rest
                if letters / visible < min_alpha_ratio:
                    return "non_alphabetic"
            elif min_alpha_ratio > 0.0:  # nothing visible: an alphabetic ratio of 0
                return "non_alphabetic"
        count = len(tokens)
        if count >= min_tokens and len(set(tokens)) < min_distinct * count:
            return "repeated_tokens"
        if repeated_turn and tokens == previous_tokens:
            return "repeated_turn"
        return None

    return check
