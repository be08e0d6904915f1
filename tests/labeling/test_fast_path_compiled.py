"""fast_path.Compiled: an ORM read compiled once per process gives what the ORM gives, call after
call with other values, and refuses a query that would freeze a moment into its SQL. The claim's
and home page's compiled reads (labeling.actions.claim, labeling.work.seats, labeling.fast_path.reads) against
their ORM twins on random states of a campaign."""

import random
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from labeling.actions import claim
from labeling.fast_path import claim as fast_claim
from labeling.fast_path import compiled as fast_path
from labeling.fast_path.reads import HISTORY as _HISTORY
from labeling.fast_path.reads import OPEN_CAMPAIGNS as _OPEN_CAMPAIGNS
from labeling.fast_path.reads import history as _history
from labeling.fast_path.reads import open_campaigns as _open_campaigns
from labeling.models import HIT, Assignment, Campaign, Worker
from labeling.services.workers import worker_for_user
from labeling.work import seats
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [pytest.mark.usefixtures("quiz_demo_bank"), pytest.mark.django_db]


def _shuffle_states(rng: random.Random, now) -> None:
    """Every assignment in a random state and time limit (some lapsed), campaigns open or not."""
    for assignment in Assignment.objects.all():
        assignment.status = rng.choice(
            [Assignment.ACCEPTED, Assignment.ACCEPTED, Assignment.SUBMITTED, Assignment.EXPIRED]
        )
        assignment.expires_at = now + timedelta(minutes=rng.choice([-90, -5, 5, 60]))
        assignment.unproven = rng.random() < 0.3
        assignment.accepted_at = now - timedelta(minutes=rng.randint(1, 500))
        assignment.save()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_claims_compiled_reads_give_what_their_orm_twins_give(seed, django_user_model):
    rng = random.Random(seed)
    campaigns = [open_campaign(name=f"c{seed}-{i}", dialogues_per_hit=3, quiz_per_hit=1) for i in range(2)]
    for index, campaign in enumerate(campaigns):
        build_hits(campaign, make_dialogues(9, prefix=f"s{seed}c{index}"), seed=seed)
    users = [django_user_model.objects.create_user(f"w{seed}-{i}") for i in range(6)]
    team = [worker_for_user(user) for user in users]
    for _ in range(12):
        claim.claim_next_hit(rng.choice(team), rng.choice([None, *campaigns]))
    now = timezone.now()
    _shuffle_states(rng, now)
    Campaign.objects.filter(pk=campaigns[1].pk).update(status=rng.choice([Campaign.OPEN, Campaign.CLOSED]))

    for moment in (now, now + timedelta(minutes=10), now + timedelta(hours=3)):
        before = moment - timedelta(minutes=30)
        compiled = fast_claim.ANY_LAPSED.first_row(moment, before)
        assert (compiled is not None) == fast_claim.ANY_LAPSED.queryset(moment, before).exists()
        for worker in team:
            row = fast_claim.LIVE.first_row(worker.pk, moment)
            twin = fast_claim.LIVE.queryset(worker.pk, moment).first()
            assert (row and row[0]) == (twin and twin.pk)
    for worker in team:
        with transaction.atomic():
            locked = fast_claim.locked_worker(worker.pk)
        assert locked == worker and locked.landing_key == worker.landing_key
        assert [a.pk for a in _history(worker)] == [a.pk for a in _HISTORY.queryset(worker.pk)]
        assert {a.hit.campaign.pk for a in _history(worker)} <= {c.pk for c in campaigns}
        live = claim.live_assignment(worker)
        orm = Assignment.objects.live().filter(worker=worker, hit__campaign__status=Campaign.OPEN)
        expected = orm.order_by("accepted_at").first()
        assert (live and (live.pk, live.hit.pk, live.hit.campaign.name)) == (
            expected and (expected.pk, expected.hit.pk, expected.hit.campaign.name)
        )
    for hit in HIT.objects.all():
        assert seats.taken(hit.pk) == fast_claim.TAKEN.queryset(hit.pk).count()
        assert {s for (s,) in fast_claim.SLOTS.rows(hit.pk)} == set(fast_claim.SLOTS.queryset(hit.pk))
    assert [c.pk for c in _open_campaigns()] == [c.pk for c in _OPEN_CAMPAIGNS.queryset()]


def test_each_call_puts_its_own_values_in(django_user_model):
    first, second = (worker_for_user(django_user_model.objects.create_user(name)) for name in ("one", "two"))
    read = fast_path.Compiled(lambda worker_id: Worker.objects.filter(pk=worker_id).values("external_id"), -7_000_001)
    assert read.rows(first.pk) == [("one",)]
    assert read.rows(second.pk) == [("two",)]  # the SQL compiled once, the value of this call
    assert read.rows(-1) == []


def test_a_moment_made_inside_the_query_is_refused_when_compiling(db):
    frozen = fast_path.Compiled(lambda: Assignment.objects.filter(expires_at__lte=timezone.now()))
    with pytest.raises(ValueError, match="stand-in"):
        frozen.rows()


class _Deadlock(Exception):
    sqlstate = "40P01"


@pytest.mark.django_db(transaction=True)  # a claim inside a caller's transaction is not retried
def test_a_claim_postgresql_ended_to_break_a_deadlock_is_made_again(monkeypatch, django_user_model):
    from django.db import OperationalError

    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=4)
    worker = worker_for_user(django_user_model.objects.create_user("retried"))
    real, failures = claim._claim, []

    def deadlocked_once(*args, **options):
        if not failures:
            failures.append(1)
            raise OperationalError("deadlock detected") from _Deadlock()
        return real(*args, **options)

    monkeypatch.setattr(claim, "_claim", deadlocked_once)
    assignment = claim.claim_next_hit(worker)
    assert failures == [1] and assignment is not None
    assert list(Assignment.objects.filter(worker=worker)) == [assignment]  # one seat, taken once

    def other_error(*args, **options):
        raise OperationalError("server closed the connection")

    monkeypatch.setattr(claim, "_claim", other_error)
    with pytest.raises(OperationalError):
        claim.claim_next_hit(worker)  # only a deadlock is retried


@pytest.mark.parametrize("seed", [5, 6])
def test_screens_and_the_quiz_score_read_alike_both_ways(seed, settings, django_user_model):
    from labeling.fast_path import screen as screens
    from labeling.fast_path.submit import unanswered
    from labeling.task_types.last_turn_label.quiz import score_quiz
    from tests.labeling.hit_factory import answer_everything

    rng = random.Random(seed)
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(6, prefix=f"q{seed}"), seed=seed)
    worker = worker_for_user(django_user_model.objects.create_user(f"scored{seed}"))
    assignment = claim.claim_next_hit(worker)
    answer_everything(assignment, wrong_quiz=rng.randint(0, 2))
    Assignment.objects.get(pk=assignment.pk).responses.order_by("?").first().delete()  # one left open

    def read():
        screens.forget()
        shown = {
            hit.pk: [(p, s.item.pk, s.item.quiz_question_id, s.turns_html) for p, s in screens.screens_of(hit).items()]
            for hit in HIT.objects.all()
        }
        return shown, score_quiz(assignment), unanswered(assignment)

    fast = read()
    settings.ANNOTATOR_FAST_PATH = False
    assert read() == fast
    assert len(fast[2]) == 1
