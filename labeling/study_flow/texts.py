"""Which of a campaign's texts a participant is shown (Campaign.study_flow's "translations", the
shape in labeling.study_flow.config): the researcher's version in the participant's language where
given, else the campaign's own. Label names, descriptions and examples are shown so; an answer is
always the label's own name. Pure: no Django import (tests/labeling/test_study_flow_config.py).
"""

from annotation.taxonomy import normalise_label_name
from labeling.study_flow.config import CHOICE


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


def given_in(translations: dict, language: str | None) -> dict:
    """The researcher's texts in `language` (pt-br: pt-br's, else pt's), or {} where none is given."""
    language = (language or "").lower()
    return translations.get(language) or translations.get(language.split("-")[0]) or {}


def translation_key(translations: dict, language: str | None) -> str:
    """Which of the researcher's versions `language` is shown in: its code among `translations`
    (given_in's rule), or "" for the campaign's own texts."""
    language = (language or "").lower()
    return next((code for code in (language, language.split("-")[0]) if translations.get(code)), "")


def _question_in(question: dict, given: dict) -> dict:
    """A survey question as shown: its text translated where given, and its choices as (value,
    shown) pairs: the value posted and stored is the campaign's own, so answers count together."""
    shown = {**question, "question": given.get("question", question["question"])}
    if question["kind"] == CHOICE:
        shown["options"] = list(zip(question["choices"], given.get("choices", question["choices"]), strict=True))
    return shown


def labels_in(flow: dict, language: str | None) -> dict:
    """The researcher's label texts in `language` (texts_in's "labels", read alone)."""
    return given_in(flow.get("translations") or {}, language).get("labels", {})


def label_shown(labels: dict, name: str) -> str:
    """A label's name in the participant's language where given (the answer stays the label's own)."""
    return label_texts(labels, name).get("name", name)


def label_texts(labels: dict, name: str) -> dict:
    """The researcher's texts of the label `name` ({"name", "description", "examples"}, each
    optional) among a language's `labels`, found by name with the taxonomy's case rule; {} if none."""
    if name in labels:
        return labels[name]
    key = normalise_label_name(name)
    return next((texts for given, texts in labels.items() if normalise_label_name(given) == key), {})


def label_named(labels: dict, shown: str) -> str | None:
    """The label's own name whose name in a language's `labels` is `shown` (the taxonomy's case
    rule), or None: a participant who types the name they were shown means that label."""
    key = normalise_label_name(shown)
    return next((own for own, texts in labels.items() if normalise_label_name(texts.get("name", "")) == key), None)
