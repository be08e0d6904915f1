"""The label names, descriptions and examples a participant is shown in their language: the
researcher's versions in Campaign.study_flow's "translations" (the shape in
labeling.study_flow.config) where given, else the label's own. An answer is always the label's own
name. Read by the work screens (task types), the answer action, the flow's pages and the
`label_in` template filter. Pure: no Django import (tests/labeling/test_study_flow_config.py).
"""

from annotation.taxonomy import normalise_label_name


def given_in(translations: dict, language: str | None) -> dict:
    """The researcher's texts in `language` (pt-br: pt-br's, else pt's), or {} where none is given."""
    language = (language or "").lower()
    return translations.get(language) or translations.get(language.split("-")[0]) or {}


def translation_key(translations: dict, language: str | None) -> str:
    """Which of the researcher's versions `language` is shown in: its code among `translations`
    (given_in's rule), or "" for the campaign's own texts."""
    language = (language or "").lower()
    return next((code for code in (language, language.split("-")[0]) if translations.get(code)), "")


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
