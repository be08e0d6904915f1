"""Shared by the whole-study tests (test_platform_study_*.py): the stand-ins plugged in at the
adapters' transport point, a campaign ready for either platform, and one study's script: publish,
participants in two rounds (the quiz, then the paid work), syncs, close, settle."""

from decimal import Decimal

import pytest
from django.test import override_settings

from labeling.models import Campaign
from labeling.platforms import calls, standin
from labeling.platforms.standin.crowd import (
    BASE_URL,
    CARELESS,
    CLOCK,
    GOOD,
    PARTIAL,
    RETURNS,
    RETURNS_AFTER,
    TIMES_OUT,
    StudyRun,
)
from labeling.platforms.standin.faults import KINDS, FaultPlan
from labeling.platforms.standin.prolific_hooks import EventFaults, HookedProlificStandIn
from labeling.services import qualification
from tests.labeling.platform_helpers import draft_campaign

PROJECT = "61pppppppppppppppppppppp"
# who arrives, in order: most do the work well; one is careless (rejected below the quiz mark),
# one returns at once, one times out, one returns after submitting (Prolific), one is approved in part
BEHAVIOURS = (GOOD, CARELESS, GOOD, RETURNS, GOOD, TIMES_OUT, GOOD, RETURNS_AFTER, GOOD, PARTIAL, GOOD, GOOD)


@pytest.fixture
def platforms(monkeypatch, settings):
    """The stand-ins' settings (the built-in quiz bank: these campaigns' quizzes come from it; the
    project studies are created in); no retry waits; the stand-ins installed per test."""
    settings.QUIZ_DEMO_BANK = True
    settings.PROLIFIC_PROJECT_ID = PROJECT
    monkeypatch.setattr(calls, "sleep", lambda seconds: None)
    with CLOCK.running():
        yield
    standin.uninstall()


def study_campaign(platform: str, *, qualified: bool, hits: int = 2) -> Campaign:
    """A draft campaign in the platform's currency, rejecting work below the quiz mark, with a
    qualification quiz of 2 items (8 seats) when `qualified`."""
    fields = {"currency": "GBP" if platform == "prolific" else "USD", "below_mark": Campaign.REJECT}
    if qualified:
        fields.update(
            qualification_required=True,
            qualification_items=2,
            qualification_mark=2,
            qualification_reward=Decimal("2.70"),
        )
    campaign = draft_campaign(hits=hits, **fields)
    if qualified:
        qualification.build_qualification_hit(campaign, 8, seed=5)
    return campaign


def run_study(
    platform: str,
    *,
    qualified: bool,
    faults: FaultPlan | None = None,
    tag: str = "p",
    events: EventFaults | None = None,
) -> StudyRun:
    """One whole study from publish to close on a fresh stand-in; returns the run (its report done).
    With `events` (Prolific), the stand-in sends its webhooks with those faults and SITE_URL is an
    https address, so publishing subscribes and every event is delivered after each step."""
    if events is not None:
        with override_settings(SITE_URL=BASE_URL):
            return _run_study(platform, HookedProlificStandIn(event_faults=events), qualified, faults, tag)
    platform_standin = standin.ProlificStandIn() if platform == "prolific" else standin.MTurkStandIn()
    return _run_study(platform, platform_standin, qualified, faults, tag)


def _run_study(platform: str, platform_standin, qualified: bool, faults: FaultPlan | None, tag: str) -> StudyRun:
    platform_standin.faults = faults or FaultPlan()
    standin.install(platform_standin)
    run = StudyRun(study_campaign(platform, qualified=qualified), platform_standin)
    run.publish()
    people = [f"{tag}{index:02d}W" for index in range(len(BEHAVIOURS))]
    for person, behaviour in zip(people, BEHAVIOURS, strict=True):  # the quiz (or the paid work)
        run.arrive(person, behaviour)
    for _ in range(2):
        run.sync()
        run.pass_time(1)
    for person in people:  # those who qualified come back for the paid work
        run.arrive(person, GOOD)
    for _ in range(3):
        run.sync()
        run.pass_time(24)
    run.close()
    run.sync()
    run.settle()  # the researcher checks any payment whose outcome is unsure, and syncs
    run.finish()
    return run


def assert_settled(run: StudyRun) -> None:
    report = run.report
    assert report.syncs_blocked == 0, report.blocked_errors
    assert report.rewards_paid_once == 1.0, report
    assert report.bonuses_paid_once == 1.0, report
    assert report.studies_left_recruiting == 0, report


__all__ = ["CARELESS", "GOOD", "PARTIAL", "RETURNS", "RETURNS_AFTER", "TIMES_OUT"]


def every_fourth_call(offset: int, shift: int = 0, *, calls: int = 600) -> FaultPlan:
    """Faults at calls offset+1, offset+5, offset+9, ... (so the retry of a faulted call meets
    none), the four kinds in turn from the `shift`-th. The four offsets put a fault on every call
    of a study; with the four shifts too, every call meets each of the four kinds."""
    return FaultPlan(at={k: KINDS[(k // 4 + shift) % 4] for k in range(offset + 1, calls, 4)})


# (offset, shift): with the qualification step (the longer study, every call of the other and more)
# every call meets every kind; without it, every call meets one fault
FAULT_WALK = [(offset, shift) for offset in range(4) for shift in range(4)]
FAULT_WALK_SHORT = [(offset, 0) for offset in range(4)]


def paid_study_filled(run: StudyRun) -> tuple[int, int]:
    """(submissions approved in full or in part, places) of the paid Prolific study: equal when the
    places freed by rejections and returns were offered again until taken by good work."""
    publication = run.publication
    approved = [
        s
        for s in run.standin.submissions.values()
        if s.study_id == publication.external_id and s.status in ("APPROVED", "PARTIALLY APPROVED")
    ]
    return len(approved), run.standin.studies[publication.external_id].places
