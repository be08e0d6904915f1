"""The annotator fast path's seat taking: a claim's count, slot, assignment and free-seat count in
one statement, on the HIT the claim's search locked (labeling.actions.claim, the one writer of
assignments, calls it; on PostgreSQL only, and with ANNOTATOR_FAST_PATH off it is never called).

Its full-path twin is labeling.work.seats.taken, slot_for_new_seat and set_free around the ORM's
Assignment.objects.create: five statements and a savepoint's two, a third of a claim's CPU in a
study's first second (issue 37). The conditions stay written once: the count, the slots and the
seats that held a slot are the SQL of labeling.work.seats' own querysets (seats.TAKEN, SLOTS, HELD),
compiled once per process. The statement runs after the HIT's row lock is held (the search's
FOR UPDATE), so, as the full path's separate statements do, it counts what every earlier holder of
the lock committed.

When the HIT turns out full (its count was left high by a hand edit: see labeling.work.seats), nothing
is inserted and None is returned; the claim then rolls back and is made again by the full path,
which repairs the count and searches on.
"""

import functools

from django.db import connection
from django.db.models import signals

from config import rows
from labeling.models import HIT, Assignment, Worker
from labeling.work import seats


def take_seat(hit: HIT, worker: Worker, *, expires_at, unproven: bool) -> Assignment | None:
    """A new assignment of `worker` on the locked `hit` (its seat slot chosen as
    seats.slot_for_new_seat chooses it, the HIT's free-seat count written as seats.set_free
    writes it), or None when the HIT has no free seat by the count from its assignments."""
    new = Assignment(hit=hit, worker=worker, expires_at=expires_at, unproven=unproven)
    columns = _inserted_fields()
    values = [field.get_db_prep_save(field.pre_save(new, add=True), connection) for field in columns]
    taken_sql, taken_params = seats.TAKEN.sql(hit.pk)
    slots_sql, slots_params = seats.SLOTS.sql(hit.pk)
    held_sql, held_params = seats.HELD.sql(hit.pk)
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
