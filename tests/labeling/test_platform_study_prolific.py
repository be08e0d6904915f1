"""Whole Prolific studies through the stand-in (labeling.platforms.standin): published, taken by
simulated participants (the quiz, the paid work; careless, returning, timing out, approved in
part), synced, closed; then the ledger, the studies' states and the syncs are checked, without
faults and with a fault at every call in turn (a lost answer after Prolific acted, 429 with
Retry-After, 500, a timeout)."""

import pytest

from labeling.models import PaymentEntry, Publication
from tests.labeling.platform_study import (
    FAULT_WALK,
    FAULT_WALK_SHORT,
    assert_settled,
    every_fourth_call,
    paid_study_filled,
    platforms,
    run_study,
)

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("qualified", [False, True], ids=["no-quiz", "quiz"])
def test_a_whole_study_pays_each_reward_and_bonus_once_and_stops(platforms, qualified):
    run = run_study("prolific", qualified=qualified)
    assert_settled(run)
    paid = PaymentEntry.objects.filter(paid_at__isnull=False)
    assert paid.filter(kind=PaymentEntry.BONUS).exists() and paid.filter(kind=PaymentEntry.REWARD).count() >= 4
    assert {study.status for study in run.standin.studies.values()} <= {"AWAITING REVIEW", "COMPLETED"}
    assert Publication.objects.get().status == Publication.CLOSED
    approved, places = paid_study_filled(run)  # Prolific's own pauses were undone: every place filled
    assert approved == places


@pytest.mark.parametrize(
    ("qualified", "offset", "shift"),
    [(True, *walk) for walk in FAULT_WALK] + [(False, *walk) for walk in FAULT_WALK_SHORT],
)
def test_a_fault_at_every_call_in_turn_pays_once_and_leaves_nothing_recruiting(platforms, qualified, offset, shift):
    run = run_study("prolific", qualified=qualified, faults=every_fourth_call(offset, shift), tag=f"f{offset}{shift}")
    assert run.report.faults >= 6
    assert_settled(run)
    approved, places = paid_study_filled(run)
    assert approved == places
