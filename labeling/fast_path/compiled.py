"""The annotator's fast path's machinery and the pages' reads: hand-written SQL, built once per
process, behind ANNOTATOR_FAST_PATH.

Every statement here has a plain ORM twin that runs when the setting is off (and nothing here runs
then): the reads in labeling.fast_path.reads, the claim search in labeling.actions.claim (open_hits_for), the
autosave's write in labeling.actions.answer.save_response. The config side of the same path is
config/rows.py (a row read by SQL built once), config/auth.py (the signed-in user) and
config/sessions/ (the session row), which config/settings.py names only with the setting on.

Why it exists: the ORM compiles a query anew on each call, 0.5 to 2 ms of CPU for a one-row
read by key, several times PostgreSQL's own work. What it costs: made-up ids in compiled SQL
(labeling.fast_path.claim's ClaimSearch), statements that write Response rows (labeling.fast_path.pick), and per-process routes.

Same rules as the ORM twins: an assignment is found only together with its owner (anyone else's
id reads as missing, which the views turn into a 404); `lock` takes the assignment's row lock only
(FOR UPDATE OF the assignment), never its HIT's or campaign's; the autosave's write checks owner,
HIT, acceptance time, state and label in its own SQL and writes what save_response writes
(labeling.fast_path.pick).
"""

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from django.conf import settings
from django.db import connection

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from config import rows
from labeling.models import HIT, Assignment, Campaign, Response, Worker


def enabled() -> bool:
    """Whether the fast path runs (settings.ANNOTATOR_FAST_PATH, read on every call)."""
    return settings.ANNOTATOR_FAST_PATH


# --- The reads every annotator request makes ----------------------------------------------------


def worker_of(user_id: int) -> Worker | None:
    """The site Worker of account `user_id`, or None."""
    return rows.fetch_one(Worker, "t.user_id = %s", [user_id])


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
    with rows.cursor() as cursor:
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
    with rows.cursor() as cursor:
        cursor.execute(_assignment_with_answers_sql(len(item_ids)), [*item_ids, pk, user_id])
        found = cursor.fetchall()
    if not found:
        return None, stored
    for *_, item_id, name, text, method in found:
        if item_id is not None:
            stored[item_id] = (name, text, method)
    return _assignment_from(found[0][:-4], user_id), stored


def _assignment_from(row, user_id: int) -> Assignment:
    assignment = assignment_with_hit(row)
    _remember_route(assignment, user_id)
    return assignment


def assignment_with_hit(row) -> Assignment:
    """An assignment with `.hit` and `.hit.campaign` from a row of their columns in that order
    (a read with select_related("hit__campaign"))."""
    assignment, hit, hit.campaign = instances(row, Assignment, HIT, Campaign)
    assignment.hit = hit
    return assignment


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
    with rows.cursor() as cursor:
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


# --- Routes: what never changes about an assignment -------------------------------------------


@dataclass(frozen=True)
class Route:
    """What an assignment read once tells about later requests for it, and never changes: whose
    it is, its HIT (the screens cache's key, and its kind) and its campaign's task type. A hint
    only: a write that uses it checks owner, HIT and state again in its own SQL."""

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
    hit = HIT(
        pk=assignment.hit.pk,
        created_at=assignment.hit.created_at,
        kind=assignment.hit.kind,
        campaign_id=assignment.hit.campaign_id,  # a screen's label set (its campaign's), fast_pick's Next
    )
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


# --- Reads compiled once --------------------------------------------------------------------------


# Stand-ins for a Compiled query's parameters (values no real parameter has), named once for every
# module that compiles a read: ids no row has, a seat slot past any real one (a seat is a small
# positive number: the ORM drops an integer out of its field's range), moments in 2001
STAND_IN_WORKER, STAND_IN_CAMPAIGN, STAND_IN_HIT, STAND_IN_ASSIGNMENT = -7_000_001, -7_000_002, -7_000_003, -7_000_005
STAND_IN_SEAT = 32_001
STAND_IN_MOMENTS = tuple(datetime(2001, 2, 3, 4, 5, 6, 700 + i, tzinfo=UTC) for i in range(4))  # now, a cutoff...


class Compiled:
    """Any ORM read compiled once per process. `build(*stand_ins)`
    returns the queryset (written once, the ORM twin runs it as is with the fast path off); its SQL
    is compiled on the first call and each call puts its own values where the stand-ins' landed in
    the parameters. A stand-in must be a value no other parameter has (the STAND_IN_ names). Every datetime among the parameters must be a stand-in
    (checked when compiling): a moment computed inside `build` would be frozen into the SQL.
    Every stand-in must reach the parameters (checked too: the ORM drops an integer out of its
    field's range). Compile it inside a transaction when the query locks (select_for_update)."""

    def __init__(self, build, *stand_ins) -> None:
        self._build = build
        self._stand_ins = stand_ins
        self._compiled: dict[str, tuple[str, list, list[int | None]]] = {}

    def queryset(self, *values):
        """The ORM twin: the same query for these values, run by the ORM."""
        return self._build(*values)

    def sql(self, *values) -> tuple[str, list]:
        """The compiled SQL and the parameters for `values` (given in the stand-ins' order)."""
        sql, params, slots = self._compile()
        adapted = [_adapt(value) for value in values]
        return sql, [param if slot is None else adapted[slot] for param, slot in zip(params, slots, strict=True)]

    def rows(self, *values) -> list[tuple]:
        sql, params = self.sql(*values)
        with rows.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def count(self, *values, cap: int | None = None) -> int:
        """How many rows the query reads (its SQL wrapped in a COUNT), no further than `cap`."""
        sql, params = self.sql(*values)
        if cap is not None:
            sql, params = f"{sql} LIMIT %s", [*params, cap]
        with rows.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM ({sql}) counted", params)
            return cursor.fetchone()[0]

    def first_row(self, *values) -> tuple | None:
        sql, params = self.sql(*values)
        with rows.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()

    def _compile(self) -> tuple[str, list, list[int | None]]:
        key = connection.vendor
        if key not in self._compiled:
            sql, params = self._build(*self._stand_ins).query.sql_with_params()
            stand_ins = [_adapt(value) for value in self._stand_ins]
            slots: list[int | None] = []
            for param in params:
                slot = next((i for i, s in enumerate(stand_ins) if _hashable(param) and param == s), None)
                if slot is None and isinstance(param, datetime):
                    raise ValueError(f"a moment that is no stand-in in compiled SQL: {param!r} ({sql})")
                slots.append(slot)
            missing = set(range(len(stand_ins))) - set(slots)
            if missing:  # e.g. an integer lookup the ORM dropped as out of its field's range
                raise ValueError(f"stand-ins not found among the parameters: {sorted(missing)} ({sql})")
            if key == "postgresql":
                sql, params, slots = _inline_constants(sql, list(params), slots)
            self._compiled[key] = (sql, list(params), slots)
        return self._compiled[key]


def exist(*reads: tuple["Compiled", tuple]) -> tuple[bool, ...]:
    """Whether each read ((Compiled, its values)) finds a row, asked in one statement
    (SELECT EXISTS (...), EXISTS (...): PostgreSQL and SQLite alike)."""
    parts, params = [], []
    for compiled, values in reads:
        sql, read_params = compiled.sql(*values)
        parts.append(f"EXISTS ({sql})")
        params += read_params
    with rows.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(parts)}", params)
        return tuple(bool(found) for found in cursor.fetchone())


_PLACEHOLDER = re.compile(r"%%|%s")


def _inline_constants(sql: str, params: list, slots: list[int | None]) -> tuple[str, list, list[int | None]]:
    """The compiled SQL with its constants (every parameter that is no stand-in: a status, a
    free-seat floor, a flag, all written in code) as SQL literals. A plan PostgreSQL keeps for a
    prepared statement (a generic plan) can then use a partial index whose predicate they match
    (`hit_free_seats`: seats_free > 0; `assignment_live_expiry`: status = 'accepted'), which it
    cannot prove for a parameter. Integers, booleans and strings only; anything else stays bound."""
    kept_params, kept_slots, pieces = [], [], iter(zip(params, slots, strict=True))

    def literal(match: re.Match) -> str:
        if match.group() == "%%":
            return "%%"
        param, slot = next(pieces)
        if slot is None and isinstance(param, bool):
            return "true" if param else "false"
        if slot is None and isinstance(param, int):
            return str(int(param))
        if slot is None and isinstance(param, str) and "\0" not in param:
            return "'" + param.replace("'", "''").replace("%", "%%") + "'"
        kept_params.append(param)
        kept_slots.append(slot)
        return "%s"

    sql = _PLACEHOLDER.sub(literal, sql)
    return sql, kept_params, kept_slots


def _adapt(value):
    """A value as the ORM puts it among a query's parameters."""
    return connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value


def instances(row, *models) -> list:
    """The instances of `models` whose columns follow one another in `row` (a select_related
    read: the model's, then each related one's, in `rows.fields` order)."""
    built, start = [], 0
    for model in models:
        size = len(rows.fields(model))
        built.append(rows.build(model, row[start : start + size]))
        start += size
    return built


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
