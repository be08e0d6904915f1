"""A claim's statements, in the order a claim runs them: labeling.actions.claim (the one writer of
assignments) calls one entry per step, and each runs its statement compiled once with
ANNOTATOR_FAST_PATH on, its ORM twin with it off, but for `probe`, the search's `first_free` and
`count`, and `take_seat`, which exist for the fast path alone (the claim calls them only with it on:
their ORM twins are the claim's own, labeling.actions.claim's full path).

1. `probe`: whether any seat comes back (`lapsed`) and whether any HIT of an open campaign has a free
   seat, in one statement; `any_lapsed` asks the first alone (before a claim the probe does not cover).
2. `locked_worker`: the worker's row, locked: one claim at a time per worker.
3. `live_assignment`, `landing_assignment`: the HIT the worker holds already.
4. `ClaimSearch`: the first HIT the worker may claim, locked, by the claim's own rule
   (labeling.actions.claim.open_hits_for, handed in); the home page's count; an MTurk landing's HIT.
5. `take_seat`: the seat, below.

The seat: a claim's count, slot, assignment and free-seat count in one statement, on the HIT the
claim's search locked (on PostgreSQL only; with ANNOTATOR_FAST_PATH off it is never called).
Its full-path twin is labeling.work.seats.taken, slot_for_new_seat and set_free around the ORM's
Assignment.objects.create: five statements and a savepoint's two, a third of a claim's CPU in a
study's first second (issue 37). The conditions stay written once: the count, the slots and the
seats that held a slot are the SQL of the seats' own querysets (TAKEN, SLOTS, HELD below, which
labeling.work.seats counts with), compiled once per process. The statement runs after the HIT's
row lock is held (the search's FOR UPDATE), so, as the full path's separate statements do, it
counts what every earlier holder of the lock committed.

When the HIT turns out full (its count was left high by a hand edit: see labeling.work.seats), nothing
is inserted and None is returned; the claim then rolls back and is made again by the full path,
which repairs the count and searches on.
"""

import functools
from datetime import datetime

from django.db import connection
from django.db.models import Exists, OuterRef, Q, signals
from django.utils import timezone

from config import rows
from labeling.fast_path.compiled import (
    STAND_IN_CAMPAIGN,
    STAND_IN_HIT,
    STAND_IN_MOMENTS,
    STAND_IN_WORKER,
    Compiled,
    assignment_with_hit,
    enabled,
    exist,
    instances,
)
from labeling.models import HIT, Assignment, Campaign, HITItem, QuizCheck, Worker

_NOW, _BEFORE = STAND_IN_MOMENTS[:2]


# --- 1. The probe: seats coming back, and any seat free ------------------------------------------


def lapsed_q(now: datetime, unconfirmed_before: datetime) -> Q:
    """Seats that come back: accepted past the time limit, or unproven work its platform did not
    confirm within the time limit and PLATFORM_UNCONFIRMED_GRACE_MINUTES (a made-up id's:
    `unconfirmed_before` is now less the grace)."""
    unconfirmed = Q(
        status=Assignment.SUBMITTED,
        unproven=True,
        phantom=False,  # a phantom place holds no seat: sync alone decides its work
        platform_confirmed_at__isnull=True,
        expires_at__lte=unconfirmed_before,
    )
    return Q(status=Assignment.ACCEPTED, expires_at__lte=now) | unconfirmed


def lapsed(now: datetime, unconfirmed_before: datetime):
    return Assignment.objects.filter(lapsed_q(now, unconfirmed_before))


ANY_LAPSED = Compiled(lambda now, before: lapsed(now, before).values("pk")[:1], _NOW, _BEFORE)
# with ANY_LAPSED, the probe before every claim with the fast path on: whether any HIT of an open
# campaign has a free seat. Without one, and no seat coming back, a claim can take nothing and
# answers without a lock or a search: every annotator's last claim when a campaign is done
ANY_FREE = Compiled(lambda: HIT.objects.filter(campaign__status=Campaign.OPEN, seats_free__gt=0).values("pk")[:1])


def probe(now: datetime, unconfirmed_before: datetime) -> tuple[bool, bool]:
    """(any seat coming back, any HIT of an open campaign with a free seat), in one statement."""
    return exist((ANY_LAPSED, (now, unconfirmed_before)), (ANY_FREE, ()))


def any_lapsed(now: datetime, unconfirmed_before: datetime) -> bool:
    """Whether any seat comes back (one read of the partial indexes that `lapsed_q` matches)."""
    if enabled():
        return ANY_LAPSED.first_row(now, unconfirmed_before) is not None
    return ANY_LAPSED.queryset(now, unconfirmed_before).exists()


# --- 2. The worker's row, locked ----------------------------------------------------------------


LOCKED_WORKER = Compiled(lambda worker_id: Worker.objects.select_for_update().filter(pk=worker_id), STAND_IN_WORKER)


def locked_worker(worker_id: int) -> Worker:
    """The worker's row, read again under its lock (inside the caller's transaction)."""
    if not enabled():
        return LOCKED_WORKER.queryset(worker_id).get()
    row = LOCKED_WORKER.first_row(worker_id)
    if row is None:
        raise Worker.DoesNotExist(f"worker {worker_id}")
    return rows.build(Worker, row)


# --- 3. The HIT the worker holds already ----------------------------------------------------------


LIVE = Compiled(
    lambda worker_id, now: (
        Assignment.objects.live(now)
        .filter(worker_id=worker_id, hit__campaign__status=Campaign.OPEN)
        .select_related("hit__campaign")
        .order_by("accepted_at")[:1]
    ),
    STAND_IN_WORKER,
    _NOW,
)
LANDING_ASSIGNMENT = Compiled(
    lambda worker_id: (
        Assignment.objects.filter(worker_id=worker_id).select_related("hit__campaign").order_by("-pk")[:1]
    ),
    STAND_IN_WORKER,
)


def live_assignment(worker_id: int, campaign_id: int | None = None) -> Assignment | None:
    """The worker's accepted, unexpired assignment in an open campaign (of `campaign_id`, when
    given), with its HIT and campaign; compiled once for every claim and home page (any campaign)."""
    if campaign_id is None and enabled():
        row = LIVE.first_row(worker_id, timezone.now())
        return None if row is None else assignment_with_hit(row)
    assignments = Assignment.objects.live().filter(worker_id=worker_id, hit__campaign__status=Campaign.OPEN)
    if campaign_id is not None:
        assignments = assignments.filter(hit__campaign_id=campaign_id)
    return assignments.select_related("hit__campaign").order_by("accepted_at").first()


def landing_assignment(worker_id: int) -> Assignment | None:
    """A platform landing's one assignment, in whatever state (one read, as live_assignment's)."""
    if not enabled():
        return LANDING_ASSIGNMENT.queryset(worker_id).first()
    row = LANDING_ASSIGNMENT.first_row(worker_id)
    return None if row is None else assignment_with_hit(row)


# --- 4. The search ------------------------------------------------------------------------------


class ClaimSearch:
    """labeling.actions.claim.open_hits_for's first HIT, locked (FOR UPDATE OF the HIT, SKIP LOCKED
    or waiting), with its campaign, and its count for the home page: Compiled queries, one per
    shape (with or without a campaign; skipping locked rows or waiting); and an MTurk landing's
    phantom place's HIT (no free seat needed). The conditions stay written once, in open_hits_for
    (handed in: `open_hits(worker, campaign, now=..., free_seat=...)`)."""

    def __init__(self, open_hits) -> None:
        self._open_hits = open_hits
        self._first = {
            (with_campaign, skip_locked): self._compiled(
                with_campaign,
                lambda query, skip=skip_locked: query.select_related("campaign").select_for_update(
                    skip_locked=skip, of=("self",)
                )[:1],
            )
            for with_campaign in (False, True)
            for skip_locked in (False, True)
        }
        self._count = {
            with_campaign: self._compiled(with_campaign, lambda query: query.order_by().values("pk"))
            for with_campaign in (False, True)
        }
        # the stand-in worker carries only an id: the search reads nothing else of it
        self._phantom = Compiled(
            lambda worker_id, campaign_id, hit_id, now: (
                open_hits(Worker(pk=worker_id), None, now=now, free_seat=False)
                .filter(campaign_id=campaign_id, pk=hit_id)
                .select_related("campaign")[:1]
            ),
            STAND_IN_WORKER,
            STAND_IN_CAMPAIGN,
            STAND_IN_HIT,
            _NOW,
        )

    def first_free(self, worker: Worker, campaign: Campaign | None) -> HIT | None:
        """The first claimable HIT, locked: skipping locked rows, or waiting when every candidate
        is locked (the claim's transaction holds no HIT lock then)."""
        return self.first(worker, campaign, skip_locked=True) or self.first(worker, campaign, skip_locked=False)

    def first(self, worker: Worker, campaign: Campaign | None, *, skip_locked: bool) -> HIT | None:
        """Inside the claim's transaction (the query locks)."""
        row = self._first[(campaign is not None, skip_locked)].first_row(*self._values(worker, campaign))
        if row is None:
            return None
        hit, hit.campaign = instances(row, HIT, Campaign)
        return hit

    def count(self, worker: Worker, campaign: Campaign | None, *, cap: int | None = None) -> int:
        """open_hits_for(worker, campaign).count(), counting no further than `cap` when given:
        what the home page shows per campaign."""
        return self._count[campaign is not None].count(*self._values(worker, campaign), cap=cap)

    def phantom_hit(self, worker: Worker, campaign: Campaign, hit_id: int) -> HIT | None:
        """The HIT `hit_id` with its campaign when it is open to the worker (open_hits_for, no free
        seat needed: a phantom place takes none)."""
        values = (worker.pk, campaign.pk, hit_id, timezone.now())
        if not enabled():
            return self._phantom.queryset(*values).first()
        row = self._phantom.first_row(*values)
        if row is None:
            return None
        hit, hit.campaign = instances(row, HIT, Campaign)
        return hit

    def _compiled(self, with_campaign: bool, shape) -> Compiled:
        def build(worker_id, *rest):
            *campaign_id, now = rest
            query = self._open_hits(Worker(pk=worker_id), None, now=now)
            if campaign_id:  # what open_hits_for(worker, campaign) adds
                query = query.filter(campaign_id=campaign_id[0])
            return shape(query)

        stand_ins = (STAND_IN_WORKER, STAND_IN_CAMPAIGN) if with_campaign else (STAND_IN_WORKER,)
        return Compiled(build, *stand_ins, _NOW)

    @staticmethod
    def _values(worker: Worker, campaign: Campaign | None) -> tuple:
        ids = (worker.pk, campaign.pk) if campaign is not None else (worker.pk,)
        return (*ids, timezone.now())


# --- 5. The seat --------------------------------------------------------------------------------

# the statuses that hold a seat in the count (a lapsed accepted one too, until it is expired)
SEAT_STATUSES = (Assignment.ACCEPTED, *Assignment.DONE)


def holds_a_seat() -> Q:
    """By status, or for good once shown a known answer (a qualification seat, see
    labeling.work.seats); an MTurk landing's phantom place (Assignment.phantom) never."""
    held = Q(status__in=SEAT_STATUSES) | Q(Exists(QuizCheck.objects.filter(assignment=OuterRef("pk"))))
    return held & Q(phantom=False)


# the seats held by the count, the HIT's seat slots, and the assignments that hold or held a slot
# (not an expired one that never held it, see labeling.work.seats.slot_for_new_seat)
TAKEN = Compiled(lambda hit_id: Assignment.objects.filter(holds_a_seat(), hit_id=hit_id).values("pk"), STAND_IN_HIT)
SLOTS = Compiled(
    lambda hit_id: (
        HITItem.objects.filter(hit_id=hit_id, seat__gt=0).order_by().values_list("seat", flat=True).distinct()
    ),
    STAND_IN_HIT,
)
HELD = Compiled(
    lambda hit_id: (
        Assignment.objects.filter(hit_id=hit_id).exclude(Q(status=Assignment.EXPIRED) & ~holds_a_seat()).values("seat")
    ),
    STAND_IN_HIT,
)


def take_seat(hit: HIT, worker: Worker, *, expires_at, unproven: bool, bind_to: str = "") -> Assignment | None:
    """A new assignment of `worker` on the locked `hit` (its seat slot chosen as
    seats.slot_for_new_seat chooses it, the HIT's free-seat count written as seats.set_free
    writes it), or None when the HIT has no free seat by the count from its assignments. `bind_to`:
    the platform's id of the work it is taken for (Assignment.platform_assignment_id)."""
    new = Assignment(hit=hit, worker=worker, expires_at=expires_at, unproven=unproven, platform_assignment_id=bind_to)
    columns = _inserted_fields()
    values = [field.get_db_prep_save(field.pre_save(new, add=True), connection) for field in columns]
    taken_sql, taken_params = TAKEN.sql(hit.pk)
    slots_sql, slots_params = SLOTS.sql(hit.pk)
    held_sql, held_params = HELD.sql(hit.pk)
    sql = _statement(taken_sql, slots_sql, held_sql)
    params = [
        *taken_params,
        *slots_params,
        *held_params,
        *values,
        hit.required_workers,  # a seat is taken while the count is below it
        hit.required_workers,  # the free-seat count written
        hit.pk,
    ]
    with rows.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    assignment = rows.build(Assignment, row[:-1])
    assignment.hit, assignment.worker = hit, worker
    hit.seats_free = row[-1]
    return assignment


def usable() -> bool:
    """Whether a claim's seat may be taken by the one statement: on PostgreSQL (SQLite has no
    INSERT in a WITH), and with nothing listening to an assignment's saves (the ORM's save
    would have told it)."""
    if connection.vendor != "postgresql":
        return False
    return not (signals.pre_save.has_listeners(Assignment) or signals.post_save.has_listeners(Assignment))


def _inserted_fields() -> list:
    """The columns the statement writes from values, in order: every concrete field but the key
    and the seat slot (which the statement chooses)."""
    return [field for field in rows.fields(Assignment) if not field.primary_key and field.attname != "seat"]


@functools.cache
def _statement(taken_sql: str, slots_sql: str, held_sql: str) -> str:
    """The statement around the three compiled reads (cached by their texts, fixed per process)."""
    quote = connection.ops.quote_name
    table = quote(Assignment._meta.db_table)
    fields = _inserted_fields()
    seat = quote(Assignment._meta.get_field("seat").column)
    # typed: an INSERT ... SELECT gives its parameters no column to take a type from
    casts = ", ".join(f"CAST(%s AS {field.cast_db_type(connection)})" for field in fields)
    returned = ", ".join(rows.columns(Assignment, "t"))
    hit_table = quote(HIT._meta.db_table)
    free = quote(HIT._meta.get_field("seats_free").column)
    hit_key = quote(HIT._meta.pk.column)
    return (
        f"WITH taken AS (SELECT COUNT(*) AS n FROM ({taken_sql}) holding),"
        # the slot with the fewest holders (an expired assignment never held one), lowest first
        f" slot AS (SELECT s.seat FROM ({slots_sql}) s"
        f" ORDER BY (SELECT COUNT(*) FROM ({held_sql}) h WHERE h.seat = s.seat), s.seat LIMIT 1),"
        f" t AS (INSERT INTO {table} ({', '.join(quote(field.column) for field in fields)}, {seat})"
        f" SELECT {casts}, COALESCE((SELECT seat FROM slot), 0)"
        f" WHERE (SELECT n FROM taken) < %s RETURNING *),"
        f" counted AS (UPDATE {hit_table} SET {free} = %s - (SELECT n FROM taken) - (SELECT COUNT(*) FROM t)"
        f" WHERE {hit_key} = %s RETURNING {free})"
        f" SELECT {returned}, (SELECT {free} FROM counted) FROM t"
    )


def set_free_seats(hit_id: int, count: int) -> None:
    """labeling.work.seats.set_free's UPDATE of one HIT's free-seat count, written once."""
    with rows.cursor() as cursor:
        cursor.execute(_set_free_seats_sql(), [count, hit_id])


@functools.cache
def _set_free_seats_sql() -> str:
    quote = connection.ops.quote_name
    column = quote(HIT._meta.get_field("seats_free").column)
    return f"UPDATE {quote(HIT._meta.db_table)} SET {column} = %s WHERE {quote(HIT._meta.pk.column)} = %s"
