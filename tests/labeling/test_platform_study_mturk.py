"""Whole MTurk studies through the stand-in (labeling.platforms.standin): HITs published, accepted
and submitted by simulated workers (the quiz HIT, the paid HITs; careless, returning, abandoning),
synced over simulated days (auto-approval, token expiry), closed; then the ledger, the HITs and
the syncs are checked, without faults and with a fault at every call in turn (a lost answer after
MTurk acted, throttling, ServiceFault, a timeout)."""

import pytest

from labeling.models import PaymentEntry, Publication
from tests.labeling.platform_study import (
    FAULT_WALK,
    FAULT_WALK_SHORT,
    assert_settled,
    every_fourth_call,
    platforms,
    run_study,
)

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("qualified", [False, True], ids=["no-quiz", "quiz"])
def test_a_whole_study_pays_each_reward_and_bonus_once_and_expires(platforms, qualified):
    run = run_study("mturk", qualified=qualified)
    assert_settled(run)
    paid = PaymentEntry.objects.filter(paid_at__isnull=False)
    assert paid.filter(kind=PaymentEntry.BONUS).exists() and paid.filter(kind=PaymentEntry.REWARD).count() >= 4
    assert len(run.standin.hits) == run.campaign.hits.exclude(external_id="").count()  # none made twice
    assert Publication.objects.get().status == Publication.CLOSED


@pytest.mark.parametrize(
    ("qualified", "offset", "shift"),
    [(True, *walk) for walk in FAULT_WALK] + [(False, *walk) for walk in FAULT_WALK_SHORT],
)
def test_a_fault_at_every_call_in_turn_pays_once_and_leaves_nothing_recruiting(platforms, qualified, offset, shift):
    run = run_study("mturk", qualified=qualified, faults=every_fourth_call(offset, shift), tag=f"f{offset}{shift}")
    assert run.report.faults >= 4
    assert_settled(run)
    assert len(run.standin.hits) == run.campaign.hits.exclude(external_id="").count()
