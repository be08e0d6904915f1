"""A pairwise campaign's settings (`Campaign.task_config`): its questions, what its sources are,
its seed."""

import re
from collections.abc import Mapping

from labeling.task_types.base import ConfigRefused

PAIRWISE = "pairwise"
SIDES = ("left", "right")

# ACUTE-Eval's questions (Li et al. 2019, as quoted by BotsTalk): title and the fixed wording
DEFAULT_QUESTIONS = (
    {
        "key": "engagingness",
        "title": "Engagingness",
        "wording": "Who would you prefer to talk to? Which version is more likely to hold your attention "
        "and make you want to hear more?",
    },
    {
        "key": "interestingness",
        "title": "Interestingness",
        "wording": "If you had to say one of these speakers is interesting and one is boring, who would you "
        "say is more interesting?",
    },
    {
        "key": "humanness",
        "title": "Humanness",
        "wording": "Who would you say sounds more human? Which version is more natural and personable?",
    },
)
DEFAULT_PAIR_COUNT = 100  # BotsTalk compares 100 dialogues from each dataset
MAX_QUESTIONS = 6


def clean_config(config: Mapping) -> dict:
    config = dict(config or {})
    questions = clean_questions(config.get("questions") or DEFAULT_QUESTIONS)
    sources = config.get("sources") or {}
    if not isinstance(sources, Mapping):
        raise ConfigRefused("sources", "give a description of source a and of source b")
    seed = config.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigRefused("seed", "a whole number")
    return {
        "questions": questions,
        "sources": {"a": str(sources.get("a", "source a"))[:200], "b": str(sources.get("b", "source b"))[:200]},
        "seed": seed,
    }


def clean_questions(questions) -> list[dict]:
    """Questions as [{"key", "title", "wording"}]; keys are short identifiers, unique."""
    if not isinstance(questions, list | tuple) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise ConfigRefused("questions", f"give 1 to {MAX_QUESTIONS} questions")
    cleaned, keys = [], set()
    for number, question in enumerate(questions, start=1):
        if not isinstance(question, Mapping):
            raise ConfigRefused("questions", f"question {number}: give its key, title and wording")
        key = str(question.get("key", "")).strip()
        wording = " ".join(str(question.get("wording", "")).split())
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,31}", key) or key in keys:
            raise ConfigRefused("questions", f"question {number}: key {key!r} must be a unique lower-case identifier")
        if not wording or len(wording) > 500:
            raise ConfigRefused("questions", f"question {number} ({key}): wording must be 1 to 500 characters")
        keys.add(key)
        title = " ".join(str(question.get("title") or key.capitalize()).split())[:80]
        cleaned.append({"key": key, "title": title, "wording": wording})
    return cleaned
