"""A campaign's study flow as data (Campaign.study_flow): what each optional step holds, checked
once by `clean_flow`, and the rules that read it: which step comes next for a participant, how a
practice attempt is scored, what a posted survey holds (which language's texts are shown is
labeling.study_flow.texts'). Pure: no Django import (tests/labeling/test_study_flow_config.py
needs no database).

The shape (every key optional; an empty dict is a campaign without a flow):

    {"consent": {"information": "<Markdown>", "statement": "<text>", "version": 1},
     "instructions": "<Markdown>",
     "practice": {"items": [{"turns": [["A", "text"], ...], "choices": ["Joyful", ...],
                             "answer": "Joyful", "explanation": "why"}],
                  "pass_mark": 2, "retries": 1},
     "survey": [{"key": "difficulty", "kind": "scale", "question": "How hard was it?"},
                {"key": "clarity", "kind": "choice", "question": "...", "choices": ["a", "b"]},
                {"key": "comments", "kind": "text", "question": "..."}],
     "platform": {"prolific_no_consent_code": "", "prolific_screen_out_code": ""},
     "translations": {"ar": {"consent": {...}, "instructions": "...",
                             "practice": [{"explanation": "...", "turns": [...]}],
                             "survey": {"difficulty": {"question": "...", "choices": [...]}},
                             "labels": {"Joyful": {"name": "...", "description": "...",
                                                   "examples": ["..."]}}}}}
"""

import re
import statistics
from collections import Counter
from dataclasses import dataclass

# the steps a page names in its data-step, in the order a participant meets them
CONSENT, DECLINED, INSTRUCTIONS, PRACTICE, WORK, SURVEY, DONE = (
    "consent",
    "declined",
    "instructions",
    "practice",
    "work",
    "survey",
    "done",
)
PAGE_STEPS = (CONSENT, DECLINED, INSTRUCTIONS, PRACTICE, WORK, SURVEY, DONE)
# what is recorded per participant and campaign (labeling.models.StudyStep): the pages reached,
# and the outcomes of the steps that have one
ARRIVED, CONSENTED, INSTRUCTIONS_READ = "arrived", "consented", "instructions_read"
PRACTICE_PASSED, PRACTICE_FAILED, SUBMITTED, SURVEY_ANSWERED, SURVEY_SKIPPED = (
    "practice_passed",
    "practice_failed",
    "submitted",
    "survey_answered",
    "survey_skipped",
)
RECORDED_STEPS = (
    ARRIVED,
    CONSENT,
    CONSENTED,
    DECLINED,
    INSTRUCTIONS,
    INSTRUCTIONS_READ,
    PRACTICE,
    PRACTICE_PASSED,
    PRACTICE_FAILED,
    WORK,
    SUBMITTED,
    SURVEY,
    SURVEY_ANSWERED,
    SURVEY_SKIPPED,
    DONE,
)
SCALE, CHOICE, TEXT = "scale", "choice", "text"
SURVEY_KINDS = (SCALE, CHOICE, TEXT)
SCALE_VALUES = (1, 2, 3, 4, 5)
KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
LANGUAGE = re.compile(r"[a-z]{2,3}(-[a-z0-9]{2,8})?")
MAX_TEXT = 20_000
MAX_ANSWER = 2_000
MAX_PRACTICE_ITEMS = 20
MAX_RETRIES = 10


class FlowRefused(ValueError):
    """A study flow that cannot be used; `field` names the setting at fault (study_flow.<path>)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


# --- checking a flow ----------------------------------------------------------------------------


def clean_flow(raw, previous: dict | None = None) -> dict:
    """The flow as stored, or FlowRefused naming the field. `previous`: the stored flow this one
    replaces; a consent whose texts changed gets the next version (the decisions already recorded
    keep the version they were given on)."""
    if raw in (None, ""):
        return {}
    if not isinstance(raw, dict):
        raise FlowRefused("study_flow", "must be an object (or empty: no study flow)")
    unknown = set(raw) - {"consent", "instructions", "practice", "survey", "platform", "translations"}
    if unknown:
        raise FlowRefused(f"study_flow.{sorted(unknown)[0]}", "is not a step of the study flow")
    flow = {}
    if raw.get("consent"):
        flow["consent"] = _clean_consent(raw["consent"], (previous or {}).get("consent"))
    if raw.get("instructions"):
        flow["instructions"] = _text(raw["instructions"], "study_flow.instructions")
    if raw.get("practice"):
        flow["practice"] = _clean_practice(raw["practice"])
    if raw.get("survey"):
        flow["survey"] = _clean_survey(raw["survey"])
    if raw.get("platform"):
        flow["platform"] = _clean_platform(raw["platform"])
    if raw.get("translations"):
        flow["translations"] = _clean_translations(raw["translations"], flow)
    return flow


def _text(value, field: str, *, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FlowRefused(field, "must be a non-empty text")
    if len(value) > limit:
        raise FlowRefused(field, f"is longer than {limit} characters")
    return value.strip()


def _object(value, field: str, allowed: set[str]) -> dict:
    if not isinstance(value, dict):
        raise FlowRefused(field, "must be an object")
    unknown = set(value) - allowed
    if unknown:
        raise FlowRefused(f"{field}.{sorted(unknown)[0]}", f"is not one of {', '.join(sorted(allowed))}")
    return value


def _count(value, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FlowRefused(field, f"must be a whole number from {low} to {high}")
    return value


def _clean_consent(raw, previous: dict | None) -> dict:
    raw = _object(raw, "study_flow.consent", {"information", "statement", "version"})
    consent = {
        "information": _text(raw.get("information"), "study_flow.consent.information"),
        "statement": _text(raw.get("statement"), "study_flow.consent.statement", limit=2_000),
    }
    asked = _count(raw.get("version", 1), "study_flow.consent.version", 1, 10_000)
    if previous is None:
        consent["version"] = asked
    elif (previous["information"], previous["statement"]) == (consent["information"], consent["statement"]):
        consent["version"] = previous["version"]
    else:  # new texts: a new version, whatever was posted, so no decision is read against other words
        consent["version"] = max(asked, previous["version"] + 1)
    return consent


def _clean_practice(raw) -> dict:
    raw = _object(raw, "study_flow.practice", {"items", "pass_mark", "retries"})
    items = raw.get("items")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_PRACTICE_ITEMS:
        raise FlowRefused("study_flow.practice.items", f"must be a list of 1 to {MAX_PRACTICE_ITEMS} items")
    cleaned = [_clean_practice_item(item, f"study_flow.practice.items[{i}]") for i, item in enumerate(items)]
    pass_mark = _count(raw.get("pass_mark", len(cleaned)), "study_flow.practice.pass_mark", 1, len(cleaned))
    retries = _count(raw.get("retries", 1), "study_flow.practice.retries", 0, MAX_RETRIES)
    return {"items": cleaned, "pass_mark": pass_mark, "retries": retries}


def _clean_practice_item(raw, field: str) -> dict:
    raw = _object(raw, field, {"turns", "choices", "answer", "explanation"})
    turns = _clean_turns(raw.get("turns"), f"{field}.turns")
    choices = raw.get("choices")
    if not isinstance(choices, list) or not 2 <= len(choices) <= 10:
        raise FlowRefused(f"{field}.choices", "must be a list of 2 to 10 label names")
    choices = [_text(c, f"{field}.choices[{i}]", limit=64) for i, c in enumerate(choices)]
    if len(set(choices)) != len(choices):
        raise FlowRefused(f"{field}.choices", "names a label twice")
    answer = _text(raw.get("answer"), f"{field}.answer", limit=64)
    if answer not in choices:
        raise FlowRefused(f"{field}.answer", f"{answer!r} is not one of the choices")
    explanation = _text(raw.get("explanation"), f"{field}.explanation", limit=2_000)
    return {"turns": turns, "choices": choices, "answer": answer, "explanation": explanation}


def _clean_turns(raw, field: str) -> list[list[str]]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= 12:
        raise FlowRefused(field, "must be a list of 1 to 12 [speaker, text] pairs")
    turns = []
    for i, turn in enumerate(raw):
        if not (isinstance(turn, list | tuple) and len(turn) == 2):
            raise FlowRefused(f"{field}[{i}]", "must be a [speaker, text] pair")
        turns.append([_text(turn[0], f"{field}[{i}][0]", limit=40), _text(turn[1], f"{field}[{i}][1]", limit=1_000)])
    return turns


def _clean_survey(raw) -> list[dict]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= 20:
        raise FlowRefused("study_flow.survey", "must be a list of 1 to 20 questions")
    questions, keys = [], set()
    for i, question in enumerate(raw):
        field = f"study_flow.survey[{i}]"
        question = _object(question, field, {"key", "kind", "question", "choices"})
        key = question.get("key")
        if not isinstance(key, str) or not KEY.fullmatch(key) or key in keys:
            raise FlowRefused(f"{field}.key", "must be a new short name (a-z, 0-9, _)")
        kind = question.get("kind")
        if kind not in SURVEY_KINDS:
            raise FlowRefused(f"{field}.kind", f"must be one of {', '.join(SURVEY_KINDS)}")
        cleaned = {
            "key": key,
            "kind": kind,
            "question": _text(question.get("question"), f"{field}.question", limit=500),
        }
        if kind == CHOICE:
            cleaned["choices"] = _choices(question.get("choices"), f"{field}.choices")
        keys.add(key)
        questions.append(cleaned)
    return questions


def _choices(raw, field: str) -> list[str]:
    if not isinstance(raw, list) or not 2 <= len(raw) <= 10:
        raise FlowRefused(field, "must be a list of 2 to 10 choices")
    choices = [_text(c, f"{field}[{i}]", limit=200) for i, c in enumerate(raw)]
    if len(set(choices)) != len(choices):
        raise FlowRefused(field, "names a choice twice")
    return choices


def _clean_platform(raw) -> dict:
    raw = _object(raw, "study_flow.platform", {"prolific_no_consent_code", "prolific_screen_out_code"})
    cleaned = {}
    for name, value in raw.items():
        if value in ("", None):
            continue
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9]{1,64}", value):
            raise FlowRefused(f"study_flow.platform.{name}", "must be 1 to 64 letters or digits")
        cleaned[name] = value
    return cleaned


def _clean_translations(raw, flow: dict) -> dict:
    if not isinstance(raw, dict):
        raise FlowRefused("study_flow.translations", "must be an object of language codes")
    cleaned = {}
    for language, texts in raw.items():
        field = f"study_flow.translations.{language}"
        if not isinstance(language, str) or not LANGUAGE.fullmatch(language):
            raise FlowRefused(field, "is not a language code (ISO 639-1, such as ar or fr)")
        cleaned[language] = _clean_translation(texts, flow, field)
    return cleaned


def _clean_translation(raw, flow: dict, field: str) -> dict:
    raw = _object(raw, field, {"consent", "instructions", "practice", "survey", "labels"})
    texts = {}
    if raw.get("consent"):
        consent = _object(raw["consent"], f"{field}.consent", {"information", "statement"})
        texts["consent"] = {name: _text(value, f"{field}.consent.{name}") for name, value in consent.items()}
    if raw.get("instructions"):
        texts["instructions"] = _text(raw["instructions"], f"{field}.instructions")
    if raw.get("practice"):
        texts["practice"] = _translated_practice(raw["practice"], flow, f"{field}.practice")
    if raw.get("survey"):
        texts["survey"] = _translated_survey(raw["survey"], flow, f"{field}.survey")
    if raw.get("labels"):
        texts["labels"] = _translated_labels(raw["labels"], f"{field}.labels")
    return texts


def _translated_practice(raw, flow: dict, field: str) -> list[dict]:
    items = (flow.get("practice") or {}).get("items", [])
    if not isinstance(raw, list) or len(raw) != len(items):
        raise FlowRefused(field, f"must be a list of {len(items)} items, one per practice item")
    cleaned = []
    for i, item in enumerate(raw):
        item = _object(item, f"{field}[{i}]", {"turns", "explanation"})
        one = {}
        if item.get("turns"):
            one["turns"] = _clean_turns(item["turns"], f"{field}[{i}].turns")
        if item.get("explanation"):
            one["explanation"] = _text(item["explanation"], f"{field}[{i}].explanation", limit=2_000)
        cleaned.append(one)
    return cleaned


def _translated_survey(raw, flow: dict, field: str) -> dict:
    questions = {q["key"]: q for q in flow.get("survey", [])}
    if not isinstance(raw, dict):
        raise FlowRefused(field, "must be an object keyed by the survey's question keys")
    cleaned = {}
    for key, texts in raw.items():
        if key not in questions:
            raise FlowRefused(f"{field}.{key}", "is not a question of the survey")
        texts = _object(texts, f"{field}.{key}", {"question", "choices"})
        one = {"question": _text(texts.get("question"), f"{field}.{key}.question", limit=500)}
        if "choices" in texts:
            one["choices"] = _choices(texts["choices"], f"{field}.{key}.choices")
            if len(one["choices"]) != len(questions[key].get("choices", [])):
                raise FlowRefused(f"{field}.{key}.choices", "must translate each choice, in order")
        cleaned[key] = one
    return cleaned


def _translated_labels(raw, field: str) -> dict:
    if not isinstance(raw, dict):
        raise FlowRefused(field, "must be an object keyed by label names")
    cleaned = {}
    for name, texts in raw.items():
        texts = _object(texts, f"{field}.{name}", {"name", "description", "examples"})
        one = {
            key: _text(texts[key], f"{field}.{name}.{key}", limit=300)
            for key in ("name", "description")
            if key in texts
        }
        if "examples" in texts:
            examples = texts["examples"]
            if not isinstance(examples, list) or len(examples) > 5:
                raise FlowRefused(f"{field}.{name}.examples", "must be a list of at most 5 texts")
            one["examples"] = [_text(e, f"{field}.{name}.examples[{i}]", limit=300) for i, e in enumerate(examples)]
        cleaned[name] = one
    return cleaned


# --- which step is next -------------------------------------------------------------------------


def steps_before_work(flow: dict) -> tuple[str, ...]:
    """The campaign's steps before its first work screen, in order."""
    return tuple(step for step in (CONSENT, INSTRUCTIONS, PRACTICE) if flow.get(step))


def next_step(flow: dict, reached: set[str]) -> str | None:
    """Where a participant goes before work: the first step not done yet, DECLINED after a refused
    consent, PRACTICE_FAILED after the last failed attempt, or None (the work is open to them)."""
    if DECLINED in reached and CONSENTED not in reached:
        return DECLINED
    if PRACTICE_FAILED in reached:
        return PRACTICE_FAILED
    done = {CONSENT: CONSENTED, INSTRUCTIONS: INSTRUCTIONS_READ, PRACTICE: PRACTICE_PASSED}
    return next((step for step in steps_before_work(flow) if done[step] not in reached), None)


# --- practice -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptResult:
    right: int
    total: int
    passed: bool
    retries_left: int


def attempt_result(practice: dict, answers: dict[int, str], attempt: int) -> AttemptResult:
    """One attempt (numbered from 1) scored: answers by item index; passed at the pass mark."""
    right = sum(1 for i, item in enumerate(practice["items"]) if answers.get(i) == item["answer"])
    passed = right >= practice["pass_mark"]
    return AttemptResult(right, len(practice["items"]), passed, max(0, practice["retries"] + 1 - attempt))


# --- the exit survey ----------------------------------------------------------------------------


def clean_survey_answers(questions: list[dict], posted) -> dict:
    """The answers a posted survey holds (`posted.get(key)`), each checked against its question;
    a question left empty is left out (every question is optional). FlowRefused names the key."""
    answers: dict = {}
    for question in questions:
        key, value = question["key"], (posted.get(question["key"]) or "").strip()
        if not value:
            continue
        if len(value) > MAX_ANSWER:
            raise FlowRefused(key, f"is longer than {MAX_ANSWER} characters")
        if question["kind"] == SCALE:
            if value not in {str(v) for v in SCALE_VALUES}:
                raise FlowRefused(key, "must be a whole number from 1 to 5")
            answers[key] = int(value)
        elif question["kind"] == CHOICE:
            if value not in question["choices"]:
                raise FlowRefused(key, "is not one of the choices")
            answers[key] = value
        else:
            answers[key] = value
    return answers


def survey_summary(questions: list[dict], answer_sets: list[dict]) -> list[dict]:
    """Per question: a scale's distribution and median, a choice's counts, a text's answers."""
    summary = []
    for question in questions:
        given = [answers[question["key"]] for answers in answer_sets if question["key"] in answers]
        row = {
            "key": question["key"],
            "kind": question["kind"],
            "question": question["question"],
            "answers": len(given),
        }
        if question["kind"] == SCALE:
            counted = Counter(given)
            row["distribution"] = {str(v): counted.get(v, 0) for v in SCALE_VALUES}
            row["median"] = statistics.median(given) if given else None
        elif question["kind"] == CHOICE:
            counted = Counter(given)
            row["counts"] = {choice: counted.get(choice, 0) for choice in question["choices"]}
        else:
            row["texts"] = list(given)
        summary.append(row)
    return summary


# --- the funnel ---------------------------------------------------------------------------------

FUNNEL = (
    ("arrived", ARRIVED),
    ("consented", CONSENTED),
    ("declined", DECLINED),
    ("passed practice", PRACTICE_PASSED),
    ("failed practice", PRACTICE_FAILED),
    ("started work", WORK),
    ("submitted", SUBMITTED),
    ("answered survey", SURVEY_ANSWERED),
)
# the time a step takes: from reaching it to reaching the step that ends it
STEP_SPANS = (
    ("consent", CONSENT, (CONSENTED, DECLINED)),
    ("instructions", INSTRUCTIONS, (INSTRUCTIONS_READ,)),
    ("practice", PRACTICE, (PRACTICE_PASSED, PRACTICE_FAILED)),
    ("work", WORK, (SUBMITTED,)),
    ("survey", SURVEY, (SURVEY_ANSWERED, SURVEY_SKIPPED)),
)


def funnel(reached: dict[int, dict[str, float]]) -> dict:
    """reached: participant -> step -> when (seconds). The count of participants per funnel step,
    and the median seconds per step (among those who reached both its ends)."""
    counts = {name: sum(1 for steps in reached.values() if step in steps) for name, step in FUNNEL}
    medians = {}
    for name, start, ends in STEP_SPANS:
        spans = [
            min(steps[end] for end in ends if end in steps) - steps[start]
            for steps in reached.values()
            if start in steps and any(end in steps for end in ends)
        ]
        medians[name] = round(statistics.median(spans), 1) if spans else None
    return {"participants": len(reached), "counts": counts, "median_seconds": medians}
