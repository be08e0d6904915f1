"""The hot-loop shortcuts of the ingestion core give what the plain rules give (pure core, no database).

`turn_rule_check` and `SentenceBuilder._speaker_runs` are written for speed (switches read once,
joins and calls inlined); here they are compared with straightforward versions of the same rules
on tricky inputs, with every rule on and with each rule off.
"""

from collections import Counter

import pytest

from annotation.ingest import CleaningRules
from annotation.ingest.cleaning import (
    LINE_RULES,
    TURN_RULES,
    clean_line,
    is_advert,
    split_dash,
    split_mid_line_dashes,
    strip_markup,
    strip_sound_cues,
    turn_rule_check,
)
from annotation.ingest.records import normalise_text
from annotation.ingest.sentences import SentenceBuilder

TURNS = [
    "",
    " ",
    "A",
    "Ok.",
    "Previously on the show...",
    "PREVIOUSLY   ON Lost",
    "Previously one day we met.",
    "Previously, on the show.",
    "previously",
    "12345 !!! 678",
    "... ?!",
    "Où êtes-vous, mon ami ?",
    "Жду тебя дома.",
    "42 ÉÉ",
    "no no no no no",
    "no no no yes",
    "Go go go go, Bobby!",
    "x" * 101,
    "Where were you?",
    "where   WERE you?",
]


def plain_reason(text: str, previous: str | None, rules: CleaningRules) -> str | None:
    """The turn rules as the rule list states them, one after the other."""
    tokens = text.casefold().split()
    normalised = normalise_text(text)
    visible = [char for char in text if char != " "]
    alpha_ratio = sum(char.isalpha() for char in visible) / len(visible) if visible else 0.0
    checks = [
        ("previously_on", normalised.startswith("previously on")),
        ("too_short", len(text) < rules.min_chars),
        ("too_long", len(text) > rules.max_chars),
        ("non_alphabetic", alpha_ratio < rules.min_alpha_ratio),
        (
            "repeated_tokens",
            len(tokens) >= rules.min_tokens_for_repetition
            and len(set(tokens)) < rules.min_distinct_token_ratio * len(tokens),
        ),
        ("repeated_turn", normalised == previous),
    ]
    return next((name for name, hit in checks if getattr(rules, name) and hit), None)


@pytest.mark.parametrize("disabled", [(), *[(name,) for name in TURN_RULES]])
def test_the_compiled_turn_rules_match_the_plain_rules(disabled):
    rules = CleaningRules.without(disabled)
    check = turn_rule_check(rules)
    for previous in (None, *TURNS):
        previous_tokens = None if previous is None else previous.casefold().split()
        previous_normalised = None if previous is None else normalise_text(previous)
        for text in TURNS:
            expected = plain_reason(text, previous_normalised, rules)
            assert check(text, text.casefold().split(), previous_tokens) == expected, (text, previous)


def test_an_empty_turn_passes_the_alphabetic_rule_only_when_its_threshold_is_zero():
    lenient = CleaningRules.without(["too_short"])
    assert turn_rule_check(lenient)("", [], None) == "non_alphabetic"
    zero_threshold = CleaningRules(too_short=False, min_alpha_ratio=0.0)
    assert turn_rule_check(zero_threshold)("", [], None) is None


CUES = [
    "Where were you?",
    "   ",
    "- Where?\n- Here.",
    "-\n- Only the second.",
    "– Dash led\nand continued\n- new speaker",
    "<i>In italics</i>",
    "a < b <i>odd</i> markup",
    "{\\an8}Top of the screen",
    "JOHN: Where were you?\nMARY: Out.",
    "[door slams]\nWho's there?",
    "(laughs) Funny. (coughs)",
    "♪ Moon river ♪",
    "# la la la #\nSing!",
    "Subtitles by SomeTeam",
    "Goodbye, my baby.",
    "www.example.org",
    "- [gasps]\n- What?",
    "DR. HALE:\nShe is fine.",
    "\n\nTrailing blank lines\n\n",
    "(ELECTRONIC\nMELODY)",
    "Jack: Fine.\\NOk. - Sure thing.",
    "¶ Over the hills ¶",
    "Wait. - What? – Nothing.",
    "{\\an8}Open cue (rain",
    "falling) Go inside.",
]


def plain_runs(text: str, rules: CleaningRules, removed: Counter, state: dict) -> list[tuple[str, bool]]:
    """Cue text to speaker runs with the public helpers, one step and one line at a time."""
    if rules.markup and strip_markup(text) != text:
        text = strip_markup(text)
        removed["markup"] += 1
    if is_advert(text, rules, removed):
        return []
    if rules.sound_cue:
        text, state["open"], cut = strip_sound_cues(text, state["open"])
        removed["sound_cue"] += cut
    runs: list[list] = []
    for raw_line in text.split("\n"):
        line, dash_led = split_dash(raw_line.strip())
        pieces = split_mid_line_dashes(line) if rules.mid_line_dash and line else [line]
        removed["mid_line_dash"] += len(pieces) - 1
        for number, piece in enumerate(pieces):
            piece = clean_line(piece, rules, removed) if piece else ""
            if not piece:
                continue
            if dash_led or number or not runs:
                runs.append([piece, dash_led or number > 0])
            else:
                runs[-1][0] += " " + piece
    return [(line, dash_led) for line, dash_led in runs]


@pytest.mark.parametrize("disabled", [(), *[(name,) for name in LINE_RULES]])
def test_the_speaker_runs_fast_path_matches_the_plain_line_rules(disabled):
    rules = CleaningRules.without(disabled)
    fast_removed, plain_removed = Counter(), Counter()
    builder = SentenceBuilder(rules, fast_removed)
    state = {"open": False}
    for text in CUES:
        assert list(builder._speaker_runs(text)) == plain_runs(text, rules, plain_removed, state), text
    assert +fast_removed == +plain_removed
