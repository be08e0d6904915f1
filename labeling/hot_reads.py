"""The reads every annotator request makes, as SQL written once per process.

An answered screen costs two requests (the autosave and Next), each of which reads the
annotator's assignment (with its HIT and campaign) and the stored answers. Through the ORM each
of those reads spends 0.7 to 2 ms of CPU compiling the same query again, several times the
database's own work; here the SQL is built once from the models' own field lists and the rows
become model instances through `Model.from_db`, exactly as the ORM would build them.

Same rules as the ORM queries they replace: an assignment is found only together with its
owner (anyone else's id reads as missing, which the views turn into a 404), and `lock` takes the
assignment's row lock only (FOR UPDATE OF the assignment), never its HIT's or campaign's.
"""

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import connection

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from config import rows
from labeling.models import HIT, Assignment, Campaign, Response, Worker


def _fields(model) -> list:
    return rows.fields(model)


_build = rows.build


@cache
def _assignment_parts() -> tuple[str, str, str]:
    """(the columns: assignment, HIT, campaign; the tables they come from, joined to the worker;
    the condition: this id, held by this user) of the reads below."""
    quote = connection.ops.quote_name
    columns = [*rows.columns(Assignment, "a"), *rows.columns(HIT, "h"), *rows.columns(Campaign, "c")]
    tables = (
        f"{quote(Assignment._meta.db_table)} a"
        f" JOIN {quote(HIT._meta.db_table)} h ON h.id = a.hit_id"
        f" JOIN {quote(Campaign._meta.db_table)} c ON c.id = h.campaign_id"
        f" JOIN {quote(Worker._meta.db_table)} w ON w.id = a.worker_id"
    )
    return ", ".join(columns), tables, "a.id = %s AND w.user_id = %s"


@cache
def _assignment_sql(lock: bool) -> str:
    columns, tables, where = _assignment_parts()
    sql = f"SELECT {columns} FROM {tables} WHERE {where}"
    if lock and connection.features.has_select_for_update_of:
        sql += " FOR UPDATE OF a"
    return sql


def own_assignment(pk: int, user_id: int, *, lock: bool = False) -> Assignment | None:
    """The assignment `pk` if `user_id`'s worker holds it, with `.hit` and `.hit.campaign`
    loaded; None otherwise. lock: inside the caller's transaction, lock its row (only its)."""
    if not rows.is_key(pk):
        return None  # a URL's id past any key (SQLite would raise OverflowError: a 500)
    with connection.cursor() as cursor:
        cursor.execute(_assignment_sql(lock), [pk, user_id])
        row = cursor.fetchone()
    return None if row is None else _assignment_from(row, user_id)


@cache
def _assignment_with_answers_sql(count: int) -> str:
    quote = connection.ops.quote_name
    columns, tables, where = _assignment_parts()
    return (
        f"SELECT {columns}, r.item_id, l.name, r.new_label_text, r.method FROM {tables}"
        f" LEFT JOIN {quote(Response._meta.db_table)} r ON r.assignment_id = a.id"
        f" AND r.item_id IN ({', '.join(['%s'] * count)})"
        f" LEFT JOIN {quote(Label._meta.db_table)} l ON l.id = r.label_id WHERE {where}"
    )


def own_assignment_with_answers(
    pk: int, user_id: int, item_ids: list[int]
) -> tuple[Assignment | None, dict[int, tuple[str | None, str, str] | None]]:
    """own_assignment and stored_answers(pk, item_ids) in one statement: (the assignment or None,
    item id -> stored answer or None for every id asked for). For the items of the assignment's
    HIT; an id of another HIT's item reads as unanswered."""
    stored: dict[int, tuple[str | None, str, str] | None] = dict.fromkeys(item_ids)
    if not item_ids or not rows.is_key(pk):
        return own_assignment(pk, user_id), stored
    with connection.cursor() as cursor:
        cursor.execute(_assignment_with_answers_sql(len(item_ids)), [*item_ids, pk, user_id])
        found = cursor.fetchall()
    if not found:
        return None, stored
    for *_, item_id, name, text, method in found:
        if item_id is not None:
            stored[item_id] = (name, text, method)
    return _assignment_from(found[0][:-4], user_id), stored


def _assignment_from(row, user_id: int) -> Assignment:
    sizes = [len(_fields(model)) for model in (Assignment, HIT)]
    assignment = _build(Assignment, row[: sizes[0]])
    hit = _build(HIT, row[sizes[0] : sizes[0] + sizes[1]])
    campaign = _build(Campaign, row[sizes[0] + sizes[1] :])
    hit.campaign = campaign
    assignment.hit = hit
    _remember_route(assignment, user_id)
    return assignment


# --- Routes: what never changes about an assignment -------------------------------------------


@dataclass(frozen=True)
class Route:
    """What an assignment read once tells about later requests for it, and never changes: whose
    it is, its HIT (the screens cache's key) and its campaign's task type. A hint only: a write
    that uses it checks owner, HIT and state again in its own SQL."""

    user_id: int
    hit: HIT
    task_type: str  # the campaign's (a name in labeling.task_types' registry)
    # with the id, names this assignment even where a database hands an id out again after a
    # rollback (SQLite): a write that uses the route checks both
    accepted_at: datetime
    seat: int = 0  # the assignment's seat slot: which quiz items its screens show


MAX_ROUTES = 20_000  # a few MB per process: every annotator of a large campaign, twice over
_routes: OrderedDict[int, Route] = OrderedDict()
_routes_lock = threading.Lock()


def _remember_route(assignment: Assignment, user_id: int) -> None:
    # the screens cache's key, and the kind (a qualification screen's answer freezes once checked)
    hit = HIT(pk=assignment.hit.pk, created_at=assignment.hit.created_at, kind=assignment.hit.kind)
    route = Route(user_id, hit, assignment.hit.campaign.task_type, assignment.accepted_at, assignment.seat)
    with _routes_lock:
        _routes[assignment.pk] = route
        _routes.move_to_end(assignment.pk)
        while len(_routes) > MAX_ROUTES:
            _routes.popitem(last=False)


def route_of(assignment_id: int, user_id: int) -> Route | None:
    """The assignment's route if this process read it for `user_id` before; None otherwise."""
    with _routes_lock:
        route = _routes.get(assignment_id)
    return route if route is not None and route.user_id == user_id else None


def forget_routes() -> None:
    with _routes_lock:
        _routes.clear()


def stored_answers(assignment_id: int, item_ids: list[int]) -> dict[int, tuple[str | None, str, str] | None]:
    """item id -> (label name, new label text, method) of the assignment's stored answer, or
    None for an item not answered yet; every id asked for is a key."""
    quote = connection.ops.quote_name
    stored: dict[int, tuple[str | None, str, str] | None] = dict.fromkeys(item_ids)
    if not item_ids:
        return stored
    sql = (
        f"SELECT r.item_id, l.name, r.new_label_text, r.method FROM {quote(Response._meta.db_table)} r"
        f" LEFT JOIN {quote(Label._meta.db_table)} l ON l.id = r.label_id"
        f" WHERE r.assignment_id = %s AND r.item_id IN ({', '.join(['%s'] * len(item_ids))})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [assignment_id, *item_ids])
        stored.update({item_id: (name, text, method) for item_id, name, text, method in cursor.fetchall()})
    return stored


def active_label_named(name: str) -> Label | None:
    """`Label.objects.filter(is_active=True).by_name(name)` (the same case rule), compiled once."""
    key = normalise_label_name(name)
    if not key:
        return None
    if not key.isascii():  # SQLite folds ASCII only: the manager's rule handles the rest
        return Label.objects.filter(is_active=True).by_name(name)
    return rows.fetch_one(Label, "t.is_active AND LOWER(t.name) = %s ORDER BY t.id LIMIT 1", [key])


def response_to(assignment_id: int, item_id: int) -> Response | None:
    """The assignment's stored answer to one item, or None."""
    return rows.fetch_one(Response, "t.assignment_id = %s AND t.item_id = %s", [assignment_id, item_id])
