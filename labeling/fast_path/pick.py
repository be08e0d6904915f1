"""The annotator fast path's writes of a pick (one of a screen's three choices), one statement each:
the autosave's (`save_pick`), and a Next's that also reads what the next screen shows
(`next_with_pick`). Their full-path twin is labeling.actions.answer.save_response, through which
labeling.actions.answer, the one writer of answers, calls these; with ANNOTATOR_FAST_PATH off,
or for anything but such a pick, they write nothing and the caller takes the full path.

Nothing is taken on trust from this process's caches (the route, the screens): each statement
locks the assignment row (as save_response does, so a submission and an answer queue behind one
another) and writes only if it is the one the route names (id and accepted time), the user's, on
the route's HIT, live, and the label is active. What it writes is what save_response writes for the
same pick: the label, method top3, no text, seconds added up, bounded by the time since the last
answer (as labeling.actions.answer bounds them).
"""

import functools
from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from config import rows
from labeling.fast_path.compiled import route_of
from labeling.models import HIT, Assignment, Response, Worker


def save_pick(
    assignment_id: int, user_id: int, position: int, answer: str, seconds: float, language: str, screens_of
) -> bool:
    """The autosave's common case, one of the screen's three choices picked, written; False when it
    was not written, and the caller then takes the full path (labeling.actions.answer.save_answer),
    which writes what this leaves or says why it cannot. `seconds`: the page's seconds already
    clamped as the full path stores them; `language`: the interface language the answer records
    (labeling.actions.answer.interface_language). `screens_of`: where a HIT's screens are read
    (labeling.fast_path.screen.screens_of, handed in: screens reads by the fast path's Compiled)."""
    found = _pick(assignment_id, user_id, position, answer, screens_of)
    if found is None:
        return False
    route, screen, key = found
    with rows.cursor() as cursor:
        cursor.execute(
            _save_sql(), [*_live_params(assignment_id, user_id, route), key, *_write_params(screen, seconds, language)]
        )
        return cursor.fetchone() is not None


@dataclass(frozen=True)
class Moved:
    """Where a Next by next_with_pick led: the assignment (its row as locked and read by the
    statement, `.hit` a copy of the route's, with its campaign's id), the next screen's item, and that
    screen's stored answer (label name, new label text, method) or None, keyed by the item's id."""

    assignment: Assignment
    item: object
    stored: dict
    task_type: str


def next_with_pick(
    assignment_id: int, user_id: int, position: int, answer: str, seconds: float, language: str, screens_of
) -> Moved | None:
    """A Next from screen `position` carrying one of its three choices, in one statement: the pick
    written unless it is the answer already stored (as answer_changed: the same label name), and
    the assignment and the next screen's answer read, for the view to show that screen. None when
    this is not such a Next (no screen after this one: the review; the label inactive; not the
    route's live assignment, or not this user's): nothing was written, and the caller takes the
    full path, which says why."""
    found = _pick(assignment_id, user_id, position, answer, screens_of)
    if found is None:
        return None
    route, screen, key = found
    target = screens_of(route.hit, route.seat).get(position + 1)
    if target is None:
        return None
    params = [
        *_live_params(assignment_id, user_id, route),
        key,
        assignment_id,
        screen.item.pk,
        answer,
        *_write_params(screen, seconds, language),
        answer,
        assignment_id,
        target.item.pk,
    ]
    with rows.cursor() as cursor:
        cursor.execute(_next_sql(), params)
        row = cursor.fetchone()
    if row is None:
        return None  # not live, not this user's, not the route's: the full path says why
    *columns, saved, written, name, text, method = row
    if not (saved or written):
        return None  # changed, and the label is not active: nothing written, the full path judges it
    assignment = rows.build(Assignment, columns)
    # a HIT of its own, never the route's (shared by every request for this assignment): a related
    # object cached on it by one request (the campaign, read on demand) would outlive that request
    assignment.hit = rows.copy_of(route.hit)
    stored = {target.item.pk: None if method is None else (name, text, method)}
    return Moved(assignment, target.item, stored, route.task_type)


def _pick(assignment_id: int, user_id: int, position: int, answer: str, screens_of):
    """(route, screen, folded label name) when `answer` is one of the screen's three choices on an
    assignment this process served before; else None."""
    if connection.vendor != "postgresql":
        return None  # the statements bound the seconds with PostgreSQL's date arithmetic
    route = route_of(assignment_id, user_id)
    if route is None or route.hit.kind == HIT.QUALIFICATION:
        # a qualification screen's answer freezes once checked: the full path knows; a screen of
        # another task type has no label choices, so it never matches below
        return None
    screen = screens_of(route.hit, route.seat).get(position)
    key = normalise_label_name(answer)
    if screen is None or not key or not key.isascii():  # SQLite's LOWER folds ASCII only
        return None
    if key not in {normalise_label_name(choice) for choice in screen.item.choices}:
        return None  # a pick from the "Other" list, or nothing the screen shows: the full path judges it
    return route, screen, key


def _moment(value):
    return connection.ops.adapt_datetimefield_value(value)  # as the ORM sends a datetime


def _live_params(assignment_id: int, user_id: int, route) -> list:
    return [
        assignment_id,
        _moment(route.accepted_at),
        user_id,
        route.hit.pk,
        Assignment.ACCEPTED,
        _moment(timezone.now()),
    ]


def _write_params(screen, seconds: float, language: str) -> list:
    now = _moment(timezone.now())
    data = Response._meta.get_field("data").get_db_prep_value({}, connection)
    return [screen.item.pk, Response.TOP3, data, seconds, now, now, language]


def _live_and_picked(columns: str) -> str:
    """The statements' first two parts: `live`, the assignment's row (`columns` of it, alias a)
    locked if it is the route's, the user's, on the route's HIT and live, with `since` (the last
    answer received, or the acceptance: see labeling.actions.answer._bounded_seconds); `picked`,
    the active label of that name. Parameters: _live_params, then the folded name."""
    quote = connection.ops.quote_name
    lock = " FOR UPDATE OF a" if connection.features.has_select_for_update_of else ""
    response = quote(Response._meta.db_table)
    return (
        f"WITH live AS (SELECT {columns}, GREATEST(a.accepted_at, (SELECT MAX(r.answered_at) FROM {response} r"
        f" WHERE r.assignment_id = a.id)) AS since FROM {quote(Assignment._meta.db_table)} a"
        f" JOIN {quote(Worker._meta.db_table)} w ON w.id = a.worker_id"
        f" WHERE a.id = %s AND a.accepted_at = %s AND w.user_id = %s AND a.hit_id = %s AND a.status = %s"
        f" AND a.expires_at > %s{lock}),"
        f" picked AS (SELECT l.id FROM {quote(Label._meta.db_table)} l"
        " WHERE l.is_active AND LOWER(l.name) = %s ORDER BY l.id LIMIT 1)"
    )


def _write(condition: str, changed: str = "") -> str:
    """The pick's upsert, from `live` and `picked` where `condition` holds; a stored answer is
    replaced where `changed` holds of it too. Parameters: _write_params (the item, the method, the
    data, the seconds, now twice, the interface language), then `changed`'s.

    The statement's reads are of its snapshot, taken before it waited for the assignment's row: a
    write to the same screen committed meanwhile (the autosave of the pick this Next carries) is
    not in `since` nor in `saved`. The stored row itself is read as it is now, so the seconds are
    bounded again by its own answer time and `changed` is judged on it: what save_response,
    reading after the lock, would store."""
    response = connection.ops.quote_name(Response._meta.db_table)
    return (
        f"INSERT INTO {response} (assignment_id, item_id, label_id, new_label_text, method, data, seconds_spent,"
        " answered_at, language)"
        " SELECT live.id, %s, picked.id, '', %s, %s,"
        f" LEAST(%s, GREATEST(EXTRACT(EPOCH FROM (%s - live.since)), 0)), %s, %s FROM live, picked WHERE {condition}"
        " ON CONFLICT (assignment_id, item_id) DO UPDATE SET label_id = excluded.label_id,"
        " new_label_text = excluded.new_label_text, method = excluded.method,"
        f" seconds_spent = {response}.seconds_spent + LEAST(excluded.seconds_spent,"
        f" GREATEST(EXTRACT(EPOCH FROM (excluded.answered_at - {response}.answered_at)), 0)),"
        " answered_at = excluded.answered_at, language = excluded.language"
        f"{f' WHERE {changed}' if changed else ''}"
        " RETURNING id"
    )


@functools.cache
def _save_sql() -> str:
    return f"{_live_and_picked('a.id')} {_write('true')}"


@functools.cache
def _next_sql() -> str:
    """save's statement with a pick already stored left alone (`saved`: that screen's stored label
    has the posted name, as answer_changed compares) and, returned with the assignment's columns,
    whether it was written and the next screen's stored answer (read as the statement began: the
    write is to another screen). Parameters: _live_params, the folded name, the assignment and the
    item and the posted name for `saved`, _write_params and the posted name again (the upsert's
    `changed`), the assignment and the next screen's item."""
    quote = connection.ops.quote_name
    response, label = quote(Response._meta.db_table), quote(Label._meta.db_table)
    live_and_picked = _live_and_picked(", ".join(rows.columns(Assignment, "a")))
    # as `saved`, of the stored row as it is now: a label of another name, or none
    changed = f"(SELECT l.name FROM {label} l WHERE l.id = {response}.label_id) IS DISTINCT FROM %s"
    return (
        f"{live_and_picked},"
        f" saved AS (SELECT 1 FROM {response} r JOIN {label} l ON l.id = r.label_id"
        " WHERE r.assignment_id = %s AND r.item_id = %s AND l.name = %s),"
        f" written AS ({_write('NOT EXISTS (SELECT 1 FROM saved)', changed)})"
        f" SELECT {', '.join(rows.columns(Assignment, 'live'))},"
        " EXISTS (SELECT 1 FROM saved), EXISTS (SELECT 1 FROM written), t.name, t.new_label_text, t.method"
        f" FROM live LEFT JOIN (SELECT l.name, r.new_label_text, r.method FROM {response} r"
        f" LEFT JOIN {label} l ON l.id = r.label_id WHERE r.assignment_id = %s AND r.item_id = %s) t ON true"
    )
