"""A fast-path claim takes its seat in one statement (labeling.fast_path.claim): the count of the HIT's
seats, the slot, the assignment and the free-seat count, on the HIT the search locked. It writes
what the full path writes (seats.taken, slot_for_new_seat, set_free and the ORM's create) for the
same claims, with no savepoint; a model save listener on Assignment sends claims through the ORM."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from labeling.actions.claim import claim_next_hit, expire_stale_assignments
from labeling.fast_path import claim as fast_seat
from labeling.models import HIT, Assignment, Worker
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [
    pytest.mark.usefixtures("quiz_demo_bank", "fast_path_only"),
    pytest.mark.django_db,
    # the one statement is PostgreSQL's (an INSERT in a WITH); on SQLite claims take the full path
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="fast_seat runs on PostgreSQL only"),
]


@pytest.fixture(params=[False, True], ids=["shared-quiz", "per-seat-quiz"])
def per_seat(request, settings):
    settings.QUIZ_ITEMS_PER_SEAT = request.param
    return request.param


def _walk(campaign, prefix: str) -> list[tuple]:
    """Claims on `campaign` by seven new workers, one of them expired in between (its slot comes
    back): per claim, (HIT position, seat slot, status, unproven, the HIT's free seats after)."""
    crowd = [Worker.objects.create(external_id=f"{prefix}{i}") for i in range(7)]
    seen = []

    def claim(worker):
        assignment = claim_next_hit(worker, campaign)
        hit = HIT.objects.get(pk=assignment.hit_id)
        stored = Assignment.objects.get(pk=assignment.pk)
        assert (stored.seat, stored.status, stored.expires_at) == (
            assignment.seat,
            assignment.status,
            assignment.expires_at,
        )
        limit = timedelta(minutes=campaign.time_limit_minutes)
        assert abs(stored.expires_at - stored.accepted_at - limit) < timedelta(seconds=1)
        seen.append((hit.position, stored.seat, stored.status, stored.unproven, hit.seats_free))
        return assignment

    held = [claim(worker) for worker in crowd[:4]]
    Assignment.objects.filter(pk=held[1].pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expire_stale_assignments() == 1  # its seat and slot come back
    for worker in crowd[4:]:
        claim(worker)
    return seen


def _campaign(name: str):
    campaign = open_campaign(name=name, dialogues_per_hit=2, quiz_per_hit=1, time_limit_minutes=30)
    build_hits(campaign, make_dialogues(6, prefix=name), seed=3)
    return campaign


def test_a_fast_claim_writes_what_the_full_path_writes(per_seat, monkeypatch):
    fast = _walk(_campaign("fast"), "f")
    monkeypatch.setattr(fast_seat, "usable", lambda: False)  # the full path, the same search conditions
    full = _walk(_campaign("full"), "o")
    assert fast == full
    assert [position for position, *_ in fast] == [1, 1, 1, 2, 1, 2, 2]  # the freed seat taken again
    if per_seat:
        assert [seat for _, seat, *_ in fast] == [1, 2, 3, 1, 2, 2, 3]  # the expired holder's slot
    assert all(status == Assignment.ACCEPTED and not unproven for _, _, status, unproven, _ in fast)


def test_the_seat_is_taken_by_one_statement_and_no_savepoint(per_seat):
    campaign = _campaign("one")
    worker = Worker.objects.create(external_id="one")
    with CaptureQueriesContext(connection) as captured:
        assignment = claim_next_hit(worker, campaign)
    statements = [query["sql"] for query in captured.captured_queries]
    writes = [sql for sql in statements if sql.lstrip().upper().startswith(("INSERT", "UPDATE", "WITH"))]
    assert len(writes) == 1 and writes[0].startswith("WITH taken")
    # the claim's own transaction (a savepoint only because the test runs in one), no other
    assert sum(sql.startswith("SAVEPOINT") for sql in statements) == 1
    assert HIT.objects.get(pk=assignment.hit_id).seats_free == 2


def test_a_listener_on_assignment_saves_sends_claims_through_the_orm():
    campaign = _campaign("heard")
    heard = []

    def listener(sender, instance, created, **kwargs):
        heard.append((instance.pk, created))

    post_save.connect(listener, sender=Assignment)
    try:
        assert not fast_seat.usable()
        assignment = claim_next_hit(Worker.objects.create(external_id="heard"), campaign)
    finally:
        post_save.disconnect(listener, sender=Assignment)
    assert heard == [(assignment.pk, True)]
    assert fast_seat.usable()


def test_a_full_hit_gets_no_seat_from_the_statement(per_seat):
    """The statement alone, on a HIT whose three seats are held while its count says one is free:
    nothing inserted, the count written true, None for the claim to fall back on the full path."""
    campaign = _campaign("full-hit")
    hit = campaign.hits.get(position=1)
    for worker in [Worker.objects.create(external_id=f"h{i}") for i in range(3)]:
        claim_next_hit(worker, campaign)
    HIT.objects.filter(pk=hit.pk).update(seats_free=1)
    hit.refresh_from_db()
    late = Worker.objects.create(external_id="late")
    expires_at = timezone.now() + timedelta(minutes=30)
    assert fast_seat.take_seat(hit, late, expires_at=expires_at, unproven=False) is None
    assert not Assignment.objects.filter(worker=late).exists()
    assert HIT.objects.get(pk=hit.pk).seats_free == 0
