from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from labeling.actions.claim import (
    claim_next_hit,
    expire_stale_assignments,
    open_hit_count,
    open_hits_for,
)
from labeling.actions.submit import submit_assignment
from labeling.models import HIT, Assignment, Campaign, Worker
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import (
    answer_everything,
    make_dialogues,
    open_campaign,
)

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")


@pytest.fixture(autouse=True, params=[False, True], ids=["shared-quiz", "per-seat-quiz"])
def _quiz_items_per_seat(request, settings):
    """Every test here runs twice: as shipped (a HIT's quiz items shared by its seats) and with
    QUIZ_ITEMS_PER_SEAT=1 (each seat slot its own quiz items), under the same claims."""
    settings.QUIZ_ITEMS_PER_SEAT = request.param


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, time_limit_minutes=30)
    build_hits(campaign, make_dialogues(4), seed=1)
    return campaign


def workers(count: int) -> list[Worker]:
    return [Worker.objects.create(external_id=f"w{i}") for i in range(count)]


def test_worker_for_user_creates_one_site_worker_per_account(annotators):
    first = worker_for_user(annotators[0])
    assert worker_for_user(annotators[0]) == first
    assert (first.platform, first.external_id) == (Worker.SITE, "annotator1")
    assert Worker.objects.count() == 1


def test_it_returns_the_workers_live_assignment_instead_of_a_new_one(campaign):
    (worker,) = workers(1)
    first = claim_next_hit(worker)
    assert claim_next_hit(worker) == first
    assert Assignment.objects.count() == 1
    assert first.expires_at > timezone.now() + timedelta(minutes=29)


def test_it_fills_hits_in_order_and_never_over_the_required_workers(campaign):
    claims = [claim_next_hit(w) for w in workers(7)]
    positions = [a.hit.position for a in claims if a]
    assert positions == [1, 1, 1, 2, 2, 2]
    assert claims[6] is None


def test_a_worker_never_gets_the_same_hit_twice(campaign):
    (worker,) = workers(1)
    seen = []
    while (assignment := claim_next_hit(worker)) is not None:
        seen.append(assignment.hit_id)
        answer_everything(assignment)
        submit_assignment(assignment)
    assert len(seen) == len(set(seen)) == 2


def test_an_expired_assignment_frees_its_seat_for_another_worker(campaign):
    campaign.hits.filter(position=2).delete()
    first, second, third, fourth = workers(4)
    late = claim_next_hit(first)
    claim_next_hit(second), claim_next_hit(third)
    assert claim_next_hit(fourth) is None
    Assignment.objects.filter(pk=late.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    taken = claim_next_hit(fourth)
    assert taken is not None and taken.hit_id == late.hit_id
    late.refresh_from_db()
    assert late.status == Assignment.EXPIRED
    assert claim_next_hit(first) is None  # the late worker cannot take that HIT again


def test_expire_stale_assignments_counts_what_it_released(campaign):
    a, b = (claim_next_hit(w) for w in workers(2))
    Assignment.objects.filter(pk=a.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert expire_stale_assignments() == 1
    assert expire_stale_assignments() == 0
    assert Assignment.objects.get(pk=b.pk).status == Assignment.ACCEPTED


def test_blocked_workers_get_nothing(campaign):
    (worker,) = workers(1)
    worker.status = Worker.BLOCKED
    worker.save()
    assert claim_next_hit(worker) is None
    assert not Assignment.objects.exists()


@pytest.mark.parametrize("status", [Campaign.DRAFT, Campaign.PAUSED, Campaign.CLOSED])
def test_campaigns_that_are_not_open_give_nothing(campaign, status):
    Campaign.objects.filter(pk=campaign.pk).update(status=status)
    campaign.refresh_from_db()
    (worker,) = workers(1)
    assert claim_next_hit(worker) is None
    assert claim_next_hit(worker, campaign) is None


def test_a_claim_can_be_limited_to_one_campaign(campaign):
    other = open_campaign(name="Day shift", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(other, make_dialogues(2, prefix="o"), seed=2)
    (worker,) = workers(1)
    assignment = claim_next_hit(worker, other)
    assert assignment.hit.campaign == other
    assert claim_next_hit(worker, campaign) == assignment  # one live HIT at a time, whatever the campaign
    answer_everything(assignment)
    submit_assignment(assignment)
    assert claim_next_hit(worker, other) is None
    assert claim_next_hit(worker, campaign).hit.campaign == campaign


def test_the_home_pages_count_is_open_hits_fors_count(campaign):
    """open_hit_count runs SQL compiled once for stand-in ids; it must count what the ORM query
    counts for every worker, campaign and state, never the stand-ins' answer."""
    other = open_campaign(name="Day shift", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(other, make_dialogues(2, prefix="o"), seed=2)
    first, second, third = workers(3)

    def counts(worker):
        return [(open_hit_count(worker, c), open_hits_for(worker, c).count()) for c in (None, campaign, other)]

    assert counts(first) == [(3, 3), (2, 2), (1, 1)]
    held = claim_next_hit(first, other)
    answer_everything(held)
    submit_assignment(held)
    claim_next_hit(second, campaign)
    claim_next_hit(third, campaign)
    assert counts(first) == [(2, 2), (2, 2), (0, 0)]  # never the HIT they held
    assert counts(second)[0][0] == counts(second)[0][1] == 2
    Campaign.objects.filter(pk=other.pk).update(status=Campaign.PAUSED)
    assert counts(third) == [(1, 1), (1, 1), (0, 0)]


def test_the_home_pages_count_stops_at_its_cap(campaign, settings):
    (worker,) = workers(1)
    for fast in (True, False):
        settings.ANNOTATOR_FAST_PATH = fast
        assert open_hit_count(worker, campaign) == 2
        assert open_hit_count(worker, campaign, cap=1) == 1  # counted no further
        assert open_hit_count(worker, campaign, cap=5) == 2


def test_the_home_page_shows_a_count_past_its_cap_as_cap_plus(campaign, client, django_user_model, monkeypatch):
    from labeling.pages import annotator as views

    monkeypatch.setattr(views, "HOME_COUNT_CAP", 1)
    client.force_login(django_user_model.objects.create_user("counter"))
    page = client.get(reverse("labeling:worker_home")).content.decode()
    assert '<td class="num">1+</td>' in page and "Start a HIT" in page


def test_a_hit_found_full_once_locked_is_passed_over(campaign):
    """Its seats filled behind the count's back (rows written by hand, the count left saying all
    three are free): the claim's statement counts them under the lock and takes none; the claim
    is made again by the full path, which repairs the count and takes a seat on the next HIT."""
    first = campaign.hits.get(position=1)
    Assignment.objects.bulk_create(
        Assignment(hit=first, worker=worker, expires_at=timezone.now() + timedelta(hours=1)) for worker in workers(3)
    )
    assert HIT.objects.get(pk=first.pk).seats_free == 3
    worker = Worker.objects.create(external_id="late")
    assert claim_next_hit(worker).hit.position == 2
    assert not Assignment.objects.filter(hit=first, worker=worker).exists()
    assert HIT.objects.get(pk=first.pk).seats_free == 0  # repaired


def _claim_statements(worker: Worker) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert claim_next_hit(worker) is not None
    return [query["sql"] for query in captured.captured_queries]


def test_a_claim_reads_no_more_whatever_how_many_hits_are_full_or_done(db, settings):
    """A claim is a fixed set of statements: the HIT comes from one SELECT on the free-seat count
    (FOR UPDATE SKIP LOCKED on PostgreSQL), never from counting each HIT's assignments; a claim
    that looped over HITs, or counted seats in its search, fails here."""
    small = open_campaign(name="One HIT", dialogues_per_hit=1, quiz_per_hit=0)
    build_hits(small, make_dialogues(1, prefix="s"), seed=1)
    first = _claim_statements(Worker.objects.create(external_id="alone"))

    Campaign.objects.filter(pk=small.pk).update(status=Campaign.CLOSED)
    big = open_campaign(name="Many HITs", dialogues_per_hit=1, quiz_per_hit=0)
    build_hits(big, make_dialogues(12, prefix="b"), seed=1)
    crowd = workers(3)
    for _ in range(8):  # the first eight HITs full, with submitted work
        for worker in crowd:
            assignment = claim_next_hit(worker)
            answer_everything(assignment)
            submit_assignment(assignment)
    veteran = crowd[0]  # has done eight HITs: all of them closed to them
    statements = _claim_statements(Worker.objects.get(pk=veteran.pk))

    assert len(statements) == len(first)
    searches = [sql for sql in statements if 'FROM "labeling_hit"' in sql and "seats_free" in sql]
    probes = [sql for sql in searches if sql.startswith("SELECT EXISTS")]  # with the fast path: any seat free
    assert len(probes) == (1 if settings.ANNOTATOR_FAST_PATH else 0)
    assert all("COUNT(" not in probe.upper() for probe in probes)
    searches = [sql for sql in searches if sql not in probes]
    assert len(searches) == 1
    assert "COUNT(" not in searches[0].upper()  # the search reads the count, it does not count
    if connection.vendor == "postgresql":
        assert "FOR UPDATE" in searches[0] and "SKIP LOCKED" in searches[0]
    assert Assignment.objects.get(worker=veteran, status=Assignment.ACCEPTED).hit.position == 9


def test_the_free_seat_count_follows_every_service_that_takes_or_frees_a_seat(campaign):
    from labeling.services.payments import reject_assignment
    from labeling.work.hits import add_seat
    from labeling.work.seats import recount

    def counts() -> dict[int, int]:
        return dict(HIT.objects.values_list("pk", "seats_free"))

    def truth() -> dict[int, int]:
        recount()
        return counts()

    a, b, c = (claim_next_hit(w) for w in workers(3))
    assert counts() == truth() and counts()[a.hit_id] == 0
    answer_everything(a)
    submit_assignment(a)
    Assignment.objects.filter(pk=b.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expire_stale_assignments() == 1
    assert counts()[b.hit_id] == 1
    reject_assignment(a)
    assert counts()[a.hit_id] == 2
    hit = HIT.objects.get(pk=c.hit_id)
    assert add_seat(hit, hit.required_workers)
    assert counts()[c.hit_id] == 3
    assert counts() == truth()


def test_a_lapsed_seat_is_freed_once_whatever_counts_it_before_it_is_expired(campaign):
    """A claimer recounts a HIT (after finding it full) while one of its seats has lapsed but is
    not expired yet; the expiry then frees that seat. The count must end at the truth, not one
    over: a lapsed seat stays counted until the expiry frees it."""
    from labeling.work.seats import recount

    first = campaign.hits.get(position=1)
    crowd = workers(3)
    held = [claim_next_hit(worker) for worker in crowd]
    assert {a.hit_id for a in held} == {first.pk} and HIT.objects.get(pk=first.pk).seats_free == 0
    Assignment.objects.filter(pk=held[0].pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    recount(HIT.objects.filter(pk=first.pk))  # the lapsed seat is still held in the count
    assert HIT.objects.get(pk=first.pk).seats_free == 0
    assert expire_stale_assignments() == 1
    assert HIT.objects.get(pk=first.pk).seats_free == 1  # freed once
    recount(HIT.objects.filter(pk=first.pk))
    assert HIT.objects.get(pk=first.pk).seats_free == 1


def test_a_count_left_wrong_by_a_hand_edit_never_overfills_and_is_repaired(campaign):
    from labeling.services.campaigns import set_campaign_status

    first = campaign.hits.get(position=1)
    crowd = workers(4)
    for worker in crowd[:3]:
        assert claim_next_hit(worker).hit_id == first.pk
    HIT.objects.filter(pk=first.pk).update(seats_free=3)  # too high: says every seat is free
    assert claim_next_hit(crowd[3]).hit.position == 2  # recounted under the lock: passed over
    assert HIT.objects.get(pk=first.pk).seats_free == 0  # and repaired
    HIT.objects.filter(pk=first.pk).update(seats_free=0)
    Assignment.objects.filter(worker=crowd[0]).update(status=Assignment.EXPIRED)  # a seat freed by hand
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.PAUSED)
    campaign.refresh_from_db()
    set_campaign_status(campaign, Campaign.OPEN)  # opening recounts
    assert HIT.objects.get(pk=first.pk).seats_free == 1


def test_with_no_seat_free_anywhere_a_claim_takes_no_lock_and_searches_nothing(campaign, fast_path_only):
    """Every annotator's last claim of a finished campaign: the probe before the claim finds no
    free seat and none coming back, so the claim answers at once: nothing, or the worker's live
    HIT (as the full path would), with no transaction, lock or search."""
    crowd = workers(3 * campaign.hits.count() + 1)
    held = [claim_next_hit(worker) for worker in crowd[:-1]]
    assert all(held) and not HIT.objects.filter(seats_free__gt=0).exists()
    late = crowd[-1]
    for worker, expected in ((late, None), (crowd[0], held[0])):
        with CaptureQueriesContext(connection) as captured:
            assert claim_next_hit(worker) == expected
        statements = [query["sql"] for query in captured.captured_queries]
        assert len(statements) == 2  # the probe and the live HIT's read
        assert not any("FOR UPDATE" in sql or sql.startswith(("SAVEPOINT", "BEGIN")) for sql in statements)
    # a seat coming back is freed by the same claim, which then takes it
    Assignment.objects.filter(pk=held[1].pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    taken = claim_next_hit(late)
    assert taken is not None and taken.hit_id == held[1].hit_id
