"""Every participant-facing string has a translation in every shipped language (docs/languages.md).

The catalogs (locale/<code>/LC_MESSAGES/django.po, compiled to the committed django.mo) must be
complete (no empty or fuzzy msgstr), keep each string's placeholders and markup, be compiled as
committed, and hold exactly the strings the code and templates mark today: makemessages run on a
copy of the tree finds no string the catalogs lack, and none they hold that is gone. A participant
template holds no bare English outside {% translate %} / {% blocktranslate %}.
"""

import gettext
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
TRANSLATED = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
# what makemessages reads: the apps, config and the templates (tests, benchmarks, docs are not shipped text)
SOURCES = ["annotation", "config", "jobs", "labeling", "mlworkers", "templates", "static", "manage.py"]
MAKEMESSAGES_IGNORE = ["tests", "bench", "docs", "site", "var", "media", "staticfiles"]


def catalog(code: str):
    with (ROOT / "locale" / code / "LC_MESSAGES" / "django.po").open("rb") as po:
        return read_po(po, locale=code)


def messages(code: str) -> list:
    return [message for message in catalog(code) if message.id]


def as_forms(value) -> list[str]:
    return list(value) if isinstance(value, list | tuple) else [value]


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_string_has_a_translation_that_is_not_fuzzy(code):
    untranslated = [m.id for m in messages(code) if not all(as_forms(m.string))]
    fuzzy = [m.id for m in messages(code) if m.fuzzy]
    assert not untranslated, (
        f"{code}: no translation for {untranslated} (docs/languages.md: translate, then make messages)"
    )
    assert not fuzzy, f"{code}: fuzzy (unchecked) translations {fuzzy}: check them and drop the fuzzy flag"
    assert not catalog(code).fuzzy, f"{code}: the catalog's header is marked fuzzy"


PLACEHOLDER = re.compile(r"%\(\w+\)[sdr]|\{\w+\}|</?\w+[^>]*>")


def placeholders(text: str) -> list[str]:
    return sorted(PLACEHOLDER.findall(text))


@pytest.mark.parametrize("code", TRANSLATED)
def test_translations_keep_their_placeholders_and_markup(code):
    broken = []
    for message in messages(code):
        wanted = placeholders(as_forms(message.id)[-1])  # the plural's when there is one
        broken += [(message.id, text) for text in as_forms(message.string) if placeholders(text) != wanted]
    assert not broken, f"{code}: a translation changes the placeholders or tags of its string: {broken}"


@pytest.mark.parametrize("code", TRANSLATED)
def test_the_committed_mo_is_the_po_compiled(code):
    """Django reads the .mo: one left behind its .po would show old or no text."""
    with (ROOT / "locale" / code / "LC_MESSAGES" / "django.mo").open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)._catalog
    for message in messages(code):
        if isinstance(message.id, tuple):
            forms = {(message.id[0], n): text for n, text in enumerate(message.string)}
            assert all(compiled.get(key) == text for key, text in forms.items()), f"{code}: stale .mo for {message.id}"
        else:
            assert compiled.get(message.id) == message.string, (
                f"{code}: the .mo is older than the .po ({message.id!r}): run `make messages`"
            )


def test_the_catalogs_hold_exactly_the_strings_the_code_marks(tmp_path):
    """makemessages on a copy of the tree: a string marked in code or a template and missing from
    the catalogs (someone forgot to run it), or an entry whose string is gone, fails here."""
    if shutil.which("xgettext") is None or shutil.which("msgmerge") is None:
        pytest.skip("the gettext tools are not installed (apt-get install gettext; `make test` does)")
    for name in SOURCES:
        source = ROOT / name
        copy = shutil.copytree if source.is_dir() else shutil.copy2
        copy(source, tmp_path / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if source.is_dir() else {}))
    shutil.copytree(ROOT / "locale", tmp_path / "locale")
    command = [sys.executable, "manage.py", "makemessages", "--keep-pot", "--add-location=file"]
    command += [f"--locale={code}" for code in TRANSLATED]
    command += [f"--ignore={name}" for name in MAKEMESSAGES_IGNORE]
    subprocess.run(
        command, cwd=tmp_path, check=True, capture_output=True, env={"DEBUG": "1", "PATH": os.environ.get("PATH", "")}
    )
    # a template's header names no plural rule: one is put in for babel to read it
    pot = (tmp_path / "locale" / "django.pot").read_bytes().replace(b"nplurals=INTEGER", b"nplurals=2")
    marked = {message.id for message in read_po(io.BytesIO(pot)) if message.id}
    for code in TRANSLATED:
        held = {message.id for message in messages(code)}
        assert not marked - held, (
            f"{code}: strings with no entry: {sorted(marked - held, key=str)}; run `make messages`"
        )
        assert not held - marked, f"{code}: entries for strings no longer in the code: {sorted(held - marked, key=str)}"


# --- No bare English in a participant's template ---------------------------------------------

# the templates a participant (an annotator, a platform's worker, someone not signed in) sees;
# every other template is the researcher's, in English (docs/languages.md)
PARTICIPANT = [
    "400.html",
    "403.html",
    "403_csrf.html",
    "404.html",
    "503.html",
    "base.html",
    "home.html",
    "refusal.html",
    "partials/language_switcher.html",
    "registration/*.html",
    "labeling/done.html",
    "labeling/feedback.html",
    "labeling/instructions.html",
    "labeling/quiz_check_page.html",
    "labeling/refusal.html",
    "labeling/review_page.html",
    "labeling/screen_page.html",
    "labeling/worker_home.html",
    "labeling/partials/claim_form.html",
    "labeling/partials/hit_script.html",
    "labeling/partials/qualification_status.html",
    "labeling/partials/quiz_check.html",
    "labeling/partials/review.html",
    "labeling/partials/save_status.html",
    "labeling/partials/screen.html",
    "labeling/platform/*.html",
    "labeling/task_types/pairwise.html",
    "labeling/study/*.html",
]
RESEARCHER = [
    "researcher_base.html",
    "confirm.html",
    "annotation/**/*.html",
    "jobs/**/*.html",
    "mlworkers/**/*.html",
    "partials/bar_chart.html",
    "partials/scatter_plot.html",
    "labeling/researcher/**/*.html",
    "labeling/adjudication_*.html",
    "labeling/audit_log_page.html",
    "labeling/campaign_settings.html",
    "labeling/partials/adjudication_item.html",
    "labeling/partials/audit_*.html",
    "labeling/task_types/last_turn_label_links.html",
]
TEMPLATES = ROOT / "templates"


def templates(patterns: list[str]) -> set[Path]:
    return {path for pattern in patterns for path in TEMPLATES.glob(pattern)}


def test_the_researchers_pages_say_they_are_english():
    """A researcher's page extends researcher_base.html (its <main lang="en" dir="ltr">), never
    base.html directly: its text is English whatever the language chosen."""
    direct = [
        str(path.relative_to(TEMPLATES))
        for path in templates(RESEARCHER) - {TEMPLATES / "researcher_base.html"}
        if re.match(r'\{% extends "base.html" %\}', path.read_text().lstrip())
    ]
    assert not direct, f"extend researcher_base.html instead: {direct}"


def test_every_template_is_the_participants_or_the_researchers():
    """A new template is put in one list or the other, so a participant's page is never missed."""
    unplaced = set(TEMPLATES.rglob("*.html")) - templates(PARTICIPANT) - templates(RESEARCHER)
    assert not unplaced, (
        f"place these in PARTICIPANT or RESEARCHER: {sorted(str(p.relative_to(TEMPLATES)) for p in unplaced)}"
    )


# what a participant's template may hold outside the translation tags: markup, template code, and
# text that is no language (numbers, signs, key names)
_STRIPPED = [
    r"\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}",
    r"\{#.*?#\}",
    r"\{%\s*blocktranslate.*?\{%\s*endblocktranslate\s*%\}",
    r"\{%\s*if user\.is_staff\s*%\}.*?\{%\s*endif\s*%\}",  # the researcher's links, in English
    r"\{%\s*block main_attrs\s*%\}.*?\{%\s*endblock\s*%\}",  # the main element's attributes (data-step)
    r"<script\b.*?</script>",
    r"<style\b.*?</style>",
    r"\{%.*?%\}",
    r"\{\{.*?\}\}",
]
_NOT_WORDS = {"HIT", "MTurk", "Prolific", "UTC", "Enter", "Esc"}


def bare_text(source: str) -> list[str]:
    """Words left in a template once its comments, translation tags, template code, the staff-only
    block and its markup are taken out; the text of attributes people read (placeholder, title,
    aria-label, alt) counts too."""
    for pattern in _STRIPPED:
        source = re.sub(pattern, " ", source, flags=re.S)
    readable = re.findall(r'\b(?:placeholder|title|aria-label|alt)="([^"]*)"', source)
    text = " ".join([re.sub(r"<[^>]*>", " ", source), *readable])
    return [word for word in re.findall(r"[A-Za-z][A-Za-z']+", text) if word not in _NOT_WORDS]


@pytest.mark.parametrize(
    "template", sorted(str(p.relative_to(TEMPLATES)) for p in templates(PARTICIPANT)), ids=lambda name: name
)
def test_a_participant_template_has_no_text_outside_the_translation_tags(template):
    words = bare_text((TEMPLATES / template).read_text())
    assert not words, f"{template}: text outside {{% translate %}} / {{% blocktranslate %}}: {words}"


def test_the_check_finds_a_bare_sentence_and_a_bare_attribute():
    assert bare_text("<p>Press the button</p>") == ["Press", "the", "button"]
    assert bare_text('<input placeholder="type here">') == ["type", "here"]
    assert bare_text('{% load i18n %}<p>{% translate "Fine" %} {{ name }}: 3</p>') == []
