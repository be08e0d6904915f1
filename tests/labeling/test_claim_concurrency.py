"""Claims and submissions racing for real: threads, each with its own PostgreSQL connection.

SQLite serialises writers and ignores row locks, so these tests only mean something on PostgreSQL.
"""

from collections import Counter

import pytest
from django.db import connection
from django.utils import timezone

from labeling.actions import SubmissionRefused
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.models import HIT, Assignment, Response, Worker
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign
from tests.threads import run_together

pytestmark = [
    pytest.mark.usefixtures("quiz_demo_bank"),  # HITs built with the built-in quiz bank
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)"),
    # transactional: tests/conftest.py re-seeds the labels and quiz bank after each flush
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(autouse=True, params=[False, True], ids=["shared-quiz", "per-seat-quiz"])
def _quiz_items_per_seat(request, settings):
    """Every test here runs twice: as shipped (a HIT's quiz items shared by its seats) and with
    QUIZ_ITEMS_PER_SEAT=1 (each seat slot its own quiz items), under the same claims."""
    settings.QUIZ_ITEMS_PER_SEAT = request.param


def _slots() -> tuple[int, ...]:
    """The seat slots a three-seat HIT's claims take: 1, 2, 3 with per-seat quiz items, else 0 each."""
    from django.conf import settings

    return (1, 2, 3) if settings.QUIZ_ITEMS_PER_SEAT else (0, 0, 0)


def test_many_workers_claiming_and_submitting_at_once_fill_every_hit_exactly():
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1, workers_per_hit=3)
    hits = build_hits(campaign, make_dialogues(12), seed=8)  # four HITs, twelve seats
    workers = [Worker.objects.create(external_id=f"w{i}") for i in range(8)]

    def work_until_nothing_is_left(index: int) -> list[int]:
        taken = []
        while (assignment := claim_next_hit(workers[index])) is not None:
            taken.append(assignment.hit_id)
            answer_everything(assignment)
            submit_assignment(assignment)
        return taken

    results = run_together(len(workers), work_until_nothing_is_left)
    assert not [r for r in results if isinstance(r, Exception)], results
    submitted = Assignment.objects.filter(status=Assignment.SUBMITTED)
    assert Counter(submitted.values_list("hit_id", flat=True)) == {hit.pk: 3 for hit in hits}
    assert Assignment.objects.count() == 12  # no duplicate, nothing left accepted
    for taken in results:
        assert len(taken) == len(set(taken))  # never twice on one HIT
    assert Response.objects.count() == 12 * 4  # every answer kept once
    # with per-seat quiz items racing claims took three different seat slots of every HIT; shared, slot 0
    assert Counter(submitted.values_list("hit_id", "seat")) == Counter(
        (hit.pk, seat) for hit in hits for seat in _slots()
    )
    assert sorted(h for taken in results for h in taken) == sorted(submitted.values_list("hit_id", flat=True))


def test_a_crowd_of_claimers_never_puts_more_than_three_on_a_hit():
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    hits = build_hits(campaign, make_dialogues(4), seed=2)  # two HITs, six seats
    workers = [Worker.objects.create(external_id=f"c{i}") for i in range(12)]
    results = run_together(12, lambda i: claim_next_hit(workers[i]))
    assert not [r for r in results if isinstance(r, Exception)], results
    granted = [r for r in results if r is not None]
    assert len(granted) == 6
    assert Counter(a.hit_id for a in granted) == {hits[0].pk: 3, hits[1].pk: 3}
    assert sorted((a.hit_id, a.seat) for a in granted) == [(hit.pk, seat) for hit in hits for seat in _slots()]
    assert Assignment.objects.count() == 6


def test_one_worker_double_clicking_start_gets_one_hit():
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(6), seed=2)
    worker = Worker.objects.create(external_id="clicker")
    results = run_together(6, lambda i: claim_next_hit(worker))
    assert {r.pk for r in results} == {Assignment.objects.get().pk}


def test_a_double_submission_submits_once():
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=2)
    assignment = claim_next_hit(Worker.objects.create(external_id="double"))
    answer_everything(assignment)
    results = run_together(6, lambda i: submit_assignment(Assignment.objects.get(pk=assignment.pk)))
    successes = [r for r in results if not isinstance(r, Exception)]
    refusals = [r for r in results if isinstance(r, SubmissionRefused)]
    assert len(successes) == 1 and len(refusals) == 5
    row = Assignment.objects.get(pk=assignment.pk)
    assert (row.status, row.completion_code) == (Assignment.SUBMITTED, successes[0].completion_code)


def test_claims_under_contention_never_share_a_seat_nor_exceed_the_required_workers():
    """Twenty workers claim, submit and claim again, all at once, over five HITs of three seats,
    while a few of them let their seat lapse: each seat goes to one worker, no HIT ever holds
    more than three, and the free-seat counts end equal to a recount from the assignments."""
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, workers_per_hit=3)
    hits = build_hits(campaign, make_dialogues(10), seed=5)  # five HITs, fifteen seats
    workers = [Worker.objects.create(external_id=f"r{i}") for i in range(20)]

    def work(index: int) -> list[int]:
        taken = []
        while (assignment := claim_next_hit(workers[index])) is not None:
            taken.append(assignment.hit_id)
            if index % 7 == 3 and len(taken) == 1:
                # this worker walks away: the seat lapses and the next claim frees it
                Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now())
                continue
            answer_everything(assignment)
            submit_assignment(assignment)
        return taken

    results = run_together(len(workers), work)
    assert not [r for r in results if isinstance(r, Exception)], results
    holding = Assignment.objects.holding_a_seat()
    per_hit = Counter(holding.values_list("hit_id", flat=True))
    assert per_hit == {hit.pk: 3 for hit in hits}  # every seat filled, none twice
    pairs = list(Assignment.objects.values_list("hit_id", "worker_id"))
    assert len(pairs) == len(set(pairs))  # no worker twice on one HIT, lapsed seat included
    for taken in results:
        assert len(taken) == len(set(taken))
    counts = dict(HIT.objects.values_list("pk", "seats_free"))
    assert counts == {hit.pk: 0 for hit in hits}
    assert Assignment.objects.filter(status=Assignment.EXPIRED).count() == sum(
        1 for index, taken in enumerate(results) if index % 7 == 3 and taken
    )


def test_an_accounts_first_pages_at_once_make_one_site_worker(django_user_model):
    """A new account's first requests arriving together (two tabs, a double click): one Worker,
    the same for every request; the loser of the insert reads the winner's row."""
    from labeling.services.workers import worker_for_user

    user = django_user_model.objects.create_user("twin-tabs")
    results = run_together(6, lambda index: worker_for_user(django_user_model.objects.get(pk=user.pk)).pk)
    assert not [result for result in results if isinstance(result, Exception)], results
    assert len(set(results)) == 1
    assert Worker.objects.filter(user=user).count() == 1
