"""One label screen: the dialogue with its last turn highlighted, the three choices in the
assignment's own order, and the "Other" list (the campaign's label set); and the answer it posts.

Label names, descriptions and examples are shown in the participant's language where the
researcher gave them (Campaign.study_flow's translations), else as the label has them; what is
posted and stored is the label's own name. The list and each choice's description are the bulk
of every screen, so they are rendered once per process, campaign, language and cache period, and
escaped when read; the turns come escaped from the
per-process screens cache (labeling.fast_path.screen). A quiz item is a real dialogue rendered by the same
code as a work item, carrying nothing of its gold label or explanation.
"""

import functools
import hashlib
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from labeling.crowd.bundling import choice_order
from labeling.fast_path import screen as screens
from labeling.models import Campaign, Response
from labeling.task_types.base import AnswerRefused, LabelPick
from labeling.work import label_texts as study_texts
from labeling.work.label_sets import campaign_labels

NEW_LABEL = "__new__"  # the "Other: a new label" radio's value
LABELS_CACHE_SECONDS = 60


@dataclass(frozen=True)
class Shown:
    """The campaign's labels as its screens show them in one language: each label's name,
    description and examples in it where the researcher gave them, else as the label has them."""

    html: str  # the "Other" list rendered
    names: dict[str, str]  # by folded name: the name shown, escaped
    blurbs: dict[str, str]  # by folded name: a choice's description and examples, rendered


@dataclass(frozen=True)
class LabelSet:
    listed: list[Label]  # the "Other" list: the campaign's label set
    known: dict[str, Label]  # listed and every offered label, by folded name: a choice's description
    # the researcher's texts per language (Campaign.study_flow's translations), whose "labels" are
    # label name -> name, description, examples; a language is picked as the flow's pages pick it
    translations: dict[str, dict]
    # language (Django's active one) -> the labels shown in it, built on first use: a screen
    # looks its language up here, as it looks up _parts
    shown: dict[str, Shown] = field(default_factory=dict)

    def shown_in(self, language: str | None) -> Shown:
        found = self.shown.get(language or "")
        if found is None:
            key = study_texts.translation_key(self.translations, language)
            found = self.shown.get(key) or _shown(self, key)
            self.shown[key] = self.shown[language or ""] = found  # a race builds it twice: the same
        return found


_labels_cache: dict[int, tuple[float, LabelSet]] = {}


def screen_context(assignment, item, saved: tuple | None) -> dict:
    """What one screen shows; `saved`: the stored answer (label name, new label text, method).
    The type's parts of the shared frame (labeling/partials/screen.html) come built here, escaped:
    the frame renders them as they are, with no {% extends %} of its own to resolve (that block
    bookkeeping was half of a Next's render), and every value put in is escaped or was escaped
    when its cache was filled (the turns in labeling.fast_path.screen, the label list and blurbs below)."""
    language = get_language()
    shown = cached_labels(assignment.hit.campaign_id).shown_in(language)
    parts = _parts(language)
    hit_screens = screens.screens_of(assignment.hit, assignment.seat)
    saved_name, saved_text, saved_method = saved or (None, "", "")
    other_open = saved_method in (Response.OTHER_LIST, Response.OTHER_NEW)
    checked = "" if other_open else saved_name
    # each choice with its key, name shown, description and examples (escaped when the label set
    # was read), built here rather than by a template loop or format_html (whose lazy-string
    # checks per value cost more than the escaping): a visible share of a screen's CPU. The value
    # posted is the label's own name, whatever language it is shown in.
    choices = "\n      ".join(
        _choice_html(key, name, name == checked, shown) for key, name in enumerate(choices_shown(assignment, item), 1)
    )
    other = parts.other.format(
        open=" open" if other_open else "",
        labels=_label_list_html(saved_name if other_open else "", shown.html),
        new_label=NEW_LABEL,
        new_checked=" checked" if saved_method == Response.OTHER_NEW else "",
        text=escape(saved_text),
    )
    return {
        "lead_html": mark_safe(parts.lead.format(turns=hit_screens[item.position].turns_html)),  # escaped there
        "answers_html": mark_safe(f"{choices}\n\n      {other}"),
        "hints_html": parts.hints,
        "autosave_trigger": _AUTOSAVE_TRIGGER,
    }


# the screen's parts, around the values escaped above (label names are shown as they are: dir="auto")
_CHOICE = (
    '<label class="choice">\n        <input type="radio" name="answer" value="{name}" data-key="{key}"{checked}>\n'
    '        <span class="choice-name"><kbd>{key}</kbd> <span dir="auto">{shown}</span></span>\n        {blurb}\n'
    "      </label>"
)


def _choice_html(key: int, name: str, checked: bool, shown: Shown) -> str:
    folded = normalise_label_name(name)
    return _CHOICE.format(
        name=escape(name),
        shown=shown.names.get(folded) or escape(name),
        key=key,
        checked=" checked" if checked else "",
        blurb=shown.blurbs.get(folded, ""),
    )


@dataclass(frozen=True)
class _Parts:
    lead: str  # format string: {turns}
    other: str  # format string: {open}, {labels}, {new_label}, {new_checked}, {text}
    hints: str  # safe HTML


@functools.cache
def _parts(language: str | None) -> _Parts:
    """The screen's words in `language` (the active one, which this reads the catalog in), built
    once per process and language: a screen looks them up in a dict, not the catalog. (Each
    gettext stands outside the f-strings: xgettext finds no call inside one.)"""
    question = gettext("What is the emotion or intent of the <mark>highlighted</mark> turn?")
    other_summary = escape(gettext("Other: any label, or a new one"))
    filter_placeholder = escape(gettext("Type to filter the labels"))
    filter_name = escape(gettext("Filter labels"))
    new_label, new_placeholder = escape(gettext("A new label:")), escape(gettext("type it here"))
    lead = f'  <ol class="dialogue" dir="auto">\n    {{turns}}\n  </ol>\n  <p class="muted">{_braces(question)}</p>\n'
    other = f"""<details class="other" id="other-panel"{{open}}>
        <summary><kbd>4</kbd> {_braces(other_summary)}</summary>
        <input type="search" id="label-filter" dir="auto" placeholder="{_braces(filter_placeholder)}" autocomplete="off" aria-label="{_braces(filter_name)}">
        <ul class="label-list" id="label-list">
          {{labels}}
        </ul>
        <label class="new-label">
          <input type="radio" name="answer" value="{{new_label}}"{{new_checked}}>
          {_braces(new_label)} <input type="text" name="new_label" id="new-label-text" maxlength="64" value="{{text}}" placeholder="{_braces(new_placeholder)}" dir="auto">
        </label>
      </details>"""
    # the arrows point the way the page reads: "→ next" left to right, "← next" right to left
    hints = gettext(
        "Keys: <kbd>1</kbd> <kbd>2</kbd> <kbd>3</kbd> pick · <kbd>4</kbd> Other · "
        "<kbd>Enter</kbd> or <kbd>→</kbd> next · <kbd>←</kbd> back"
    )
    return _Parts(lead, other, mark_safe(f'<p class="key-hints muted">{hints}</p>'))


def _braces(text: str) -> str:
    """A translation put into a format string: its own braces doubled (kept as they are)."""
    return text.replace("{", "{{").replace("}", "}}")


# the autosave fires on a pick or on the new label's text, not on typing in the filter
_AUTOSAVE_TRIGGER = mark_safe("change[target.name=='answer'||target.name=='new_label']")


def choices_shown(assignment, item) -> list[str]:
    """The three choices in this assignment's own order (drawn from a secret per assignment and
    item), the same rule for quiz and work screens: neither rank nor answer sets the order, and
    workers who compare notes see different orders."""
    key = hmac.new(settings.SECRET_KEY.encode(), f"choices:{assignment.pk}:{item.pk}".encode(), hashlib.sha256)
    return choice_order(item.choices, key.digest())


def _label_list_html(checked_name: str, html: str) -> str:
    """The "Other" list (`html`: the campaign's label set, rendered once per campaign, language and
    cache period: it is the bulk of every screen), with the saved answer's radio checked."""
    if checked_name:
        marker = format_html('value="{}">', checked_name)
        html = html.replace(marker, marker[:-1] + " checked>", 1)
    return mark_safe(html)  # built with format_html from escaped values only


def cached_labels(campaign_id: int) -> LabelSet:
    """The campaign's label set and the researcher's texts of it per language, as its screens show
    them; two queries per cache period. A change of the campaign's texts (change_campaign_settings)
    forgets it in the process that made the change; the others read it again within
    LABELS_CACHE_SECONDS, as they do a changed label."""
    now = time.monotonic()
    cached = _labels_cache.get(campaign_id)
    if cached is None or cached[0] < now:
        cached = _labels_cache[campaign_id] = (now + LABELS_CACHE_SECONDS, _read_label_set(campaign_id))
    return cached[1]


def forget_labels(campaign_id: int | None = None) -> None:
    """Drop one campaign's cached labels (None: every campaign's)."""
    if campaign_id is None:
        _labels_cache.clear()
    else:
        _labels_cache.pop(campaign_id, None)


def _read_label_set(campaign_id: int) -> LabelSet:
    offered = Label.objects.offered()
    listed_ids = campaign_labels(campaign_id).values("pk")
    rows = list(
        Label.objects.filter(Q(pk__in=listed_ids) | Q(pk__in=offered.values("pk")))
        .annotate(listed=Exists(listed_ids.filter(pk=OuterRef("pk"))))
        .order_by("position", "name")
    )
    flow = Campaign.objects.filter(pk=campaign_id).values_list("study_flow", flat=True).first() or {}
    translations = flow.get("translations") or {}
    listed = [label for label in rows if label.listed]
    return LabelSet(listed, {normalise_label_name(label.name): label for label in rows}, translations)


def _shown(labels: LabelSet, language: str) -> Shown:
    """The labels in `language` ("": the campaign's own texts), rendered and escaped."""
    given = labels.translations.get(language, {}).get("labels", {})
    texts = {key: _texts(label, given) for key, label in labels.known.items()}
    html = format_html_join(
        "\n",
        '<li data-filter="{}"><label><input type="radio" name="answer" value="{}">'
        ' <strong dir="auto">{}</strong> <span class="muted" dir="auto">{}</span></label></li>',
        (
            (_filter_words(label, texts[key]), label.name, texts[key][0], texts[key][1])
            for key, label in ((normalise_label_name(lb.name), lb) for lb in labels.listed)
        ),
    )
    names = {key: escape(name) for key, (name, _, _) in texts.items()}
    blurbs = {key: _blurb(description, examples) for key, (_, description, examples) in texts.items()}
    return Shown(str(html), names, blurbs)


def _texts(label: Label, given: dict) -> tuple[str, str, list[str]]:
    """(name, description, examples) of a label as shown: the researcher's where given."""
    texts = study_texts.label_texts(given, label.name)
    return (
        texts.get("name", label.name),
        texts.get("description", label.description),
        texts.get("examples", label.examples),
    )


def _filter_words(label: Label, texts: tuple) -> str:
    """What the "Other" list's filter matches: the name and description shown, and the label's own
    name (typed by one who knows it)."""
    words = [texts[0], texts[1]] + ([label.name] if texts[0] != label.name else [])
    return " ".join(words).lower()


def _blurb(description: str, examples: list[str]) -> str:
    """What a suggested choice shows under its name: the label's description and examples."""
    items = format_html_join("", "<li>“{}”</li>", ((example,) for example in examples))
    return str(
        format_html(
            '<span class="choice-description muted" dir="auto">{}</span>\n        <ul class="examples" dir="auto">{}</ul>',
            description,
            items,
        )
    )


# --- the answer posted ----------------------------------------------------------------------------


def clean_answer(posted: Mapping[str, str]) -> LabelPick:
    """The pick posted (a label name, or "Other: a new label" with its text); the answer action
    checks it against the screen's choices and the campaign's label set. A list pick that is one
    of the three choices is stored as top3 there."""
    answer = posted.get("answer", "")
    if not answer:
        raise AnswerRefused(gettext("Choose a label (or Other) before going on."))
    if answer == NEW_LABEL:
        return LabelPick(None, posted.get("new_label", ""), Response.OTHER_NEW)
    return LabelPick(answer, "", Response.OTHER_LIST)


def answer_changed(posted: Mapping[str, str], stored: tuple | None) -> bool:
    """Whether the posted answer differs from the stored one (label name, new label text, method).

    Next and Back carry the answer the autosave stored a moment before; saving it again would
    double every write, so an unchanged answer is left alone.
    """
    answer = posted.get("answer", "")
    if not answer:
        return False
    if stored is None:
        return True
    name, text, method = stored
    if answer == NEW_LABEL:
        typed = " ".join(posted.get("new_label", "").split())
        return not (method == Response.OTHER_NEW and text == typed)
    return name != answer
