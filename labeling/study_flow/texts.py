"""Which of a campaign's texts a participant is shown (Campaign.study_flow's "translations", the
shape in labeling.study_flow.config): the researcher's version in the participant's language where
given, else the campaign's own (the label names' own rules: labeling.work.label_texts). Pure: no Django import (tests/labeling/test_study_flow_config.py).
"""

from labeling.study_flow.config import CHOICE
from labeling.work.label_texts import given_in


def texts_in(flow: dict, language: str | None) -> dict:
    """The flow with its texts in `language` where the researcher gave them, else as written (the
    campaign's own language). `language`: Django's active language (en, ar, pt-br)."""
    given = given_in(flow.get("translations") or {}, language)
    shown = {key: value for key, value in flow.items() if key != "translations"}
    if given.get("consent") and "consent" in shown:
        shown["consent"] = {**shown["consent"], **given["consent"]}
    if given.get("instructions") and "instructions" in shown:
        shown["instructions"] = given["instructions"]
    if given.get("practice") and "practice" in shown:
        items = [{**item, **extra} for item, extra in zip(shown["practice"]["items"], given["practice"], strict=True)]
        shown["practice"] = {**shown["practice"], "items": items}
    if "survey" in shown:
        shown["survey"] = [_question_in(q, (given.get("survey") or {}).get(q["key"], {})) for q in shown["survey"]]
    shown["labels"] = given.get("labels", {})
    return shown


def _question_in(question: dict, given: dict) -> dict:
    """A survey question as shown: its text translated where given, and its choices as (value,
    shown) pairs: the value posted and stored is the campaign's own, so answers count together."""
    shown = {**question, "question": given.get("question", question["question"])}
    if question["kind"] == CHOICE:
        shown["options"] = list(zip(question["choices"], given.get("choices", question["choices"]), strict=True))
    return shown
