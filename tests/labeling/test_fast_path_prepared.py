"""Compiled reads on PostgreSQL are prepared statements with their constants written in: planned
once per connection (the claim's search plans in ~4 ms and runs in 0.2), and a plan kept for every
call can still use the partial indexes their constants match. Off with the database OPTIONS'
prepare_threshold unset (DB_PREPARED_STATEMENTS=0), and while Django logs queries."""

import re

import pytest
from django.db import DataError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from labeling.actions import claim
from labeling.fast_path import compiled as fast_path
from labeling.models import Assignment, Worker
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = pytest.mark.usefixtures("quiz_demo_bank")


def test_constants_are_written_in_and_stand_ins_stay_bound():
    sql = "SELECT a FROM t WHERE s = %s AND n > %s AND f = %s AND w = %s AND x LIKE 'a%%' AND q = %s AND m = %s"
    params = ["it's", 0, False, 900_000_001, "50%", 7]
    slots = [None, None, None, 0, None, 1]
    inlined, kept, kept_slots = fast_path._inline_constants(sql, params, slots)
    assert inlined == (
        "SELECT a FROM t WHERE s = 'it''s' AND n > 0 AND f = false AND w = %s AND x LIKE 'a%%' AND q = '50%%' AND m = %s"
    )
    assert kept == [900_000_001, 7] and kept_slots == [0, 1]
    # what PostgreSQL is sent: %% stands for one percent sign, as in any Django SQL
    assert inlined.replace("%%", "%").count("%s") == 2


def test_other_constants_stay_bound():
    sql, params, slots = fast_path._inline_constants("x = %s AND y = %s", [None, b"\x00"], [None, None])
    assert (sql, params, slots) == ("x = %s AND y = %s", [None, b"\x00"], [None, None])


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def _campaign():
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=0)
    build_hits(campaign, make_dialogues(6), seed=2)
    return campaign


postgresql_only = pytest.mark.skipif(
    "connection.vendor != 'postgresql'", reason="prepared statements are PostgreSQL's (psycopg)"
)


@postgresql_only
@pytest.mark.django_db
def test_the_claims_search_becomes_a_prepared_statement_with_the_same_answers():
    campaign = _campaign()
    searches = []
    for n in range(6):
        worker = Worker.objects.create(external_id=f"p{n}")
        expected = claim.open_hits_for(worker, None).first()
        with transaction.atomic():
            found = claim._CLAIM_SEARCH.first(worker, None, skip_locked=True)
        searches.append((found.pk if found else None, expected.pk if expected else None))
        claim.claim_next_hit(worker, campaign)
    assert all(found == expected for found, expected in searches) and searches[0][0] is not None
    statements = [s for s in _prepared() if 'FROM "labeling_hit"' in s and "SKIP LOCKED" in s]
    assert len(statements) == 2  # its two shapes used here: any campaign, and the claim's campaign
    for statement in statements:
        # its constants written in (the free-seat floor, the statuses); the worker and the moment bound
        assert '"labeling_hit"."seats_free" > 0' in statement
        assert "'accepted'" in statement and "$1" in statement


@postgresql_only
@pytest.mark.django_db
def test_a_plan_kept_for_every_call_can_use_the_free_seat_index():
    """A generic plan (PostgreSQL's for a prepared statement after five runs) cannot prove a
    partial index's predicate from a parameter: `seats_free > $1` would never use hit_free_seats."""
    _campaign()
    worker = Worker.objects.create(external_id="plan")
    with transaction.atomic():
        sql, params = claim._CLAIM_SEARCH._first[(False, True)].sql(worker.pk, timezone.now())
        numbered = iter(range(1, len(params) + 1))
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            cursor.execute("SET LOCAL enable_seqscan = off")
            # left with the key and the free-seat index (dropped until this transaction rolls
            # back), the planner takes the partial index whenever it may: a plan by the key
            # reads and sorts every HIT, the free-seat index only those with a seat, in claim order
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'labeling_hit'"
                " AND indexname NOT IN ('hit_free_seats', 'labeling_hit_pkey')"
            )
            for (index,) in cursor.fetchall():
                cursor.execute(f'DROP INDEX "{index}"')
            statement = re.sub(r"%s", lambda _: f"${next(numbered)}", sql).replace("%%", "%")
            cursor.execute(f"PREPARE claim_search_plan AS {statement}")
            cursor.execute(f"EXPLAIN EXECUTE claim_search_plan({', '.join(['%s'] * len(params))})", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            cursor.execute("DEALLOCATE claim_search_plan")
    assert "hit_free_seats" in plan


@postgresql_only
@pytest.mark.django_db
def test_without_prepare_threshold_or_while_queries_are_logged_nothing_is_prepared(monkeypatch):
    _campaign()
    worker = Worker.objects.create(external_id="plain")
    before = len(_prepared())
    with CaptureQueriesContext(connection) as logged:
        for _ in range(4):
            assert claim.live_assignment(worker) is None
    assert len(_prepared()) == before
    assert all(query["sql"] for query in logged.captured_queries)  # each logged with its values
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "prepare_threshold", None)
    for _ in range(4):
        assert claim.live_assignment(worker) is None
    assert len(_prepared()) == before
    monkeypatch.undo()
    for _ in range(4):
        assert claim.live_assignment(worker) is None
    assert len(_prepared()) == before + 1
    assert Assignment.objects.count() == 0


@postgresql_only
@pytest.mark.django_db
def test_timestamps_load_in_psycopgs_own_loader_with_the_orms_values():
    """rows.cursor loads timestamptz with psycopg's loader (in C) where the session's time zone is
    Django's, as Django sets it on connecting; the values are the ORM's, tzinfo included. With the
    session moved to another zone, it keeps Django's loader, and still reads what the ORM reads."""
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
    from psycopg.pq import Format
    from psycopg.types.datetime import TimestamptzLoader

    from config import rows

    campaign = _campaign()
    worker = Worker.objects.create(external_id="tz")
    assignment = claim.claim_next_hit(worker, campaign)

    def read():
        with rows.cursor() as cursor:
            loader = cursor.cursor.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
            cursor.execute("SELECT accepted_at, expires_at FROM labeling_assignment WHERE id = %s", [assignment.pk])
            return loader, cursor.fetchone()

    def orm():
        found = Assignment.objects.get(pk=assignment.pk)
        return found.accepted_at, found.expires_at

    loader, values = read()
    assert loader.__name__ == TimestamptzLoader.__name__ and loader.__module__.startswith("psycopg")
    assert values == orm() and [value.tzinfo for value in values] == [value.tzinfo for value in orm()]
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'America/New_York'")
    try:
        loader, values = read()
        assert not loader.__module__.startswith("psycopg")  # Django's own, as its cursors use
        assert values == orm()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")


@postgresql_only
@pytest.mark.django_db(transaction=True)  # closing the connection inside a test's transaction breaks it
def test_statements_written_once_share_one_cursor_per_connection():
    """rows.cursor hands out the connection's one server-binding cursor (made once, not per
    statement); a statement run while its results are still read gets a cursor of its own; a new
    connection gets a new one."""
    from config import rows

    def inner_cursor():
        with rows.cursor() as cursor:
            cursor.execute("SELECT 1")
            assert cursor.fetchone() == (1,)
            return cursor.cursor

    first, second = inner_cursor(), inner_cursor()
    assert first is second and not first.closed
    with rows.cursor() as outer:
        outer.execute("SELECT n FROM generate_series(1, 3) n")
        assert inner_cursor() is not first  # nested: its own cursor, closed after
        assert [row[0] for row in outer.fetchall()] == [1, 2, 3]  # the outer results untouched
    assert inner_cursor() is first  # handed back at the end of the block
    with pytest.raises(DataError), rows.cursor() as failing:
        failing.execute("SELECT 1/0")
    assert inner_cursor() is first  # an error hands it back too, and it still works
    connection.close()
    assert inner_cursor() is not first


@postgresql_only
@pytest.mark.django_db
def test_a_statement_is_prepared_on_its_first_run_and_never_planned_for_its_values():
    """psycopg prepares on the first run (prepare_threshold 0) and PostgreSQL keeps one generic
    plan from then on (plan_cache_mode force_generic_plan on the connection), where `auto` planned
    a statement's first five runs for their values: ~4 ms each for the claim's search."""
    _campaign()
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "force_generic_plan"
    worker = Worker.objects.create(external_id="first-run")
    with transaction.atomic():
        assert claim._CLAIM_SEARCH.first(worker, None, skip_locked=True) is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s AND statement LIKE %s",
            ['%FROM "labeling_hit"%', "%SKIP LOCKED%"],
        )
        assert cursor.fetchall() == [(1, 0)]
