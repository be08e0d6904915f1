"""What a HIT's screens show, read from the database once per process and HIT.

A HIT's items (position, dialogue, target turn, frozen choices, quiz question) never change once
it is built, and neither do the turns of its dialogues, yet every Next would otherwise read them
again (item, turns, screen count: three queries). Each gunicorn process keeps the screens of the
HITs it recently served, for a bounded time and number of HITs, so a quiz question edited by a
researcher shows up within SCREENS_TTL_SECONDS and memory stays bounded.

Nothing here decides who may see a screen: views look the assignment up for the signed-in user
first. A quiz item is a real dialogue and is read like any other; its gold label and explanation
reach the browser through the feedback page after submission, never from here.

The frame around every screen (its heading, progress, time limit and URLs) is formatted here too,
in Python, for the screen template: `frame` and `urls`.
"""

import functools
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.urls import get_script_prefix, reverse
from django.utils.html import format_html_join
from django.utils.translation import get_language, gettext

from annotation.models import Turn
from labeling.fast_path import compiled as fast_path
from labeling.models import HIT, HITItem, QuizQuestion, seat_items_q

SCREENS_TTL_SECONDS = 300
MAX_CACHED_HITS = 2000  # about 20 screens each: a few MB per process at most


@dataclass(frozen=True)
class Screen:
    """One screen: its item (read-only, shared between requests) and the turns to show,
    as (text, is_the_turn_to_label)."""

    item: HITItem
    turns: tuple[tuple[str, bool], ...]
    # the turns as the screen lists them, escaped once here rather than by the template on
    # every Next (a visible share of a screen's CPU)
    turns_html: str = ""


@dataclass(frozen=True)
class _Cached:
    screens: dict[int, Screen]
    expires_at: float


_cache: OrderedDict[tuple[int, datetime, int], _Cached] = OrderedDict()
_lock = threading.Lock()


def screens_of(hit: HIT, seat: int = 0) -> dict[int, Screen]:
    """The HIT's screens by position (1, 2, ...) as seat slot `seat` sees them (the shared items
    and that seat's own quiz items; Assignment.seat). Keyed with the HIT's creation time too, as a
    database that reuses ids after a rollback could otherwise hand back another HIT's screens."""
    key = (hit.pk, hit.created_at, seat)
    now = time.monotonic()
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.expires_at > now:
            _cache.move_to_end(key)
            return cached.screens
    screens = _read_screens(hit.pk, seat)
    if screens:  # an empty HIT is never served for long; do not let it hide items added later
        with _lock:
            _cache[key] = _Cached(screens, now + SCREENS_TTL_SECONDS)
            _cache.move_to_end(key)
            while len(_cache) > MAX_CACHED_HITS:
                _cache.popitem(last=False)
    return screens


def forget() -> None:
    """Drop every cached HIT (a test's database rollback hands ids out again)."""
    with _lock:
        _cache.clear()


_HIT, _SEAT = fast_path.STAND_IN_HIT, fast_path.STAND_IN_SEAT
# a HIT's items and their dialogues' turns: each process reads every HIT it serves once (all of
# them within seconds when a study opens), by SQL compiled once with the fast path on
_ITEMS = fast_path.Compiled(
    lambda hit_id, seat: (
        HITItem.objects.filter(seat_items_q(seat), hit_id=hit_id).select_related("quiz_question").order_by("position")
    ),
    _HIT,
    _SEAT,
)
_TURNS = fast_path.Compiled(
    lambda hit_id: (
        Turn.objects.filter(Exists(HITItem.objects.filter(hit_id=hit_id, dialogue_id=OuterRef("dialogue_id"))))
        .order_by("dialogue_id", "position")
        .values_list("dialogue_id", "pk", "text")
    ),
    _HIT,
)


def _items(hit_id: int, seat: int) -> list[HITItem]:
    if not fast_path.enabled():
        return list(_ITEMS.queryset(hit_id, seat))
    items = []
    for row in _ITEMS.rows(hit_id, seat):
        item, question = fast_path.instances(row, HITItem, QuizQuestion)
        item.quiz_question = question if item.quiz_question_id is not None else None
        items.append(item)
    return items


def _read_screens(hit_id: int, seat: int) -> dict[int, Screen]:
    items = _items(hit_id, seat)
    turns_by_dialogue: dict[int, list[tuple[int, str]]] = {}
    rows = _TURNS.rows(hit_id) if fast_path.enabled() else _TURNS.queryset(hit_id)
    for dialogue_id, turn_id, text in rows:  # the turns of every item's dialogue, whatever its seat
        turns_by_dialogue.setdefault(dialogue_id, []).append((turn_id, text))
    screens = {}
    for item in items:
        if item.payload:
            turns = ()  # another task type's item: its type reads what it shows from the payload
        elif item.dialogue_id is None:
            # the demo bank's one-turn questions (the pool's quiz items are real dialogues)
            turns = ((item.quiz_question.text, True),)
        else:
            turns = tuple(
                (text, turn_id == item.target_turn_id) for turn_id, text in turns_by_dialogue.get(item.dialogue_id, [])
            )
        screens[item.position] = Screen(item, turns, _turns_html(turns))
    return screens


def _turns_html(turns: tuple[tuple[str, bool], ...]) -> str:
    return str(
        format_html_join(
            "\n", '<li class="turn{}">{}</li>', ((" target" if is_target else "", text) for text, is_target in turns)
        )
    )


# --- The frame around a screen: its numbers, time and URLs, as the template shows them ---------------


def frame(noun: str, position: int, total: int, expires_at) -> dict:
    """The screen frame's numbers, time and words as the template shows them, formatted here once
    (the template engine localizes each number through the translation machinery: a visible share
    of a Next's CPU). `progress`: what {% widthratio position total 100 %} gave. The words are the
    active language's, looked up in the catalog once per process and language (_frame_words)."""
    delay = settings.AUTOSAVE_DELAY_MS
    expires_hm = expires_at.astimezone(UTC).strftime("%H:%M")  # the page says UTC
    words = _frame_words(get_language())
    return {
        "position_text": str(position),
        "first": position == 1,
        "heading": f"{noun} {position}/{total}",
        "progress": str(round(position / total * 100)) if total else "0",
        "expires_hm": expires_hm,
        "expires_note": words["expires_note"] % {"expires_hm": expires_hm},
        "autosave_delay_trigger": f" delay:{delay}ms" if delay else "",
        **words["labels"],
    }


@functools.cache
def _frame_words(language: str | None) -> dict:
    """The frame's words in `language`, the active one (this reads the catalog in it)."""
    return {
        "expires_note": gettext("Answers are saved as you go. Submit before %(expires_hm)s UTC."),
        "labels": {"back_label": gettext("← Back"), "next_label": gettext("Next →"), "saved_label": gettext("Saved")},
    }


_URL_IDS = (900_000_001, 900_000_002)  # stand-ins for an assignment and a position in a reversed URL


@functools.cache
def _url_forms(script_prefix: str) -> tuple[str, str]:
    """The screen's and its answer's URL with {a} and {p} for assignment and position, reversed
    once per script prefix (reverse() is a visible share of a screen's CPU)."""
    forms = []
    for name in ("labeling:assignment_item", "labeling:answer_item"):
        url = reverse(name, args=_URL_IDS)
        forms.append(url.replace(str(_URL_IDS[0]), "{a}").replace(str(_URL_IDS[1]), "{p}"))
    return forms[0], forms[1]


def urls(assignment_id: int, position: int) -> tuple[str, str]:
    """(the screen's URL, the URL its answers post to): what reverse() gives for them."""
    item_form, answer_form = _url_forms(get_script_prefix())
    return item_form.format(a=assignment_id, p=position), answer_form.format(a=assignment_id, p=position)
