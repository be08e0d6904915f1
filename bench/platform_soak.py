"""A simulated week of one study per platform through the stand-ins, with faults on the calls.

    .venv/bin/python bench/platform_soak.py [--participants 500] [--fault-rate 0.05] [--seed 7]

What it does: migrates a scratch SQLite database (in a temporary folder, deleted afterwards),
then per platform (Prolific, MTurk) runs one campaign with a qualification quiz through its
stand-in (labeling.platforms.standin, installed at the adapters' transport point): published,
then for seven simulated days --participants participants arrive (spread over the week), each
taking the quiz and, once qualified by a sync, the paid work, as the simulated crowd does
(labeling.platforms.standin.crowd: most do it well; some are careless and rejected, some return,
some time out, some return after submitting, some are approved in part on Prolific's site); a
sync every six simulated hours; then the study is closed and settled (a researcher checks any bonus
payment whose outcome was lost, as the campaign page asks). Every platform call meets a fault with
probability --fault-rate (one of: the answer lost after the platform acted, 429 with Retry-After /
throttling, 500 / ServiceFault, a timeout before it acted). Retry waits are not slept.

After the week the crowd keeps coming while the platform offers places (at most MORE_ROUNDS rounds
of six hours), as a real one does, so every paid HIT can gather its answers: the places of rejected
work (MTurk is asked for one more per rejection), returned work and timed-out work are taken again.

Per platform it prints
    platform= participants= faults= rewards_paid_once= bonuses_paid_once= studies_left_recruiting= syncs_blocked= rewards= bonuses= hits= hits_completed=
(rewards_paid_once: the share of rewards held exactly once by both the platform and the ledger, at
the amount paid; bonuses_paid_once: likewise for bonuses; studies_left_recruiting: studies or HITs
still offering work after the close; syncs_blocked: syncs that failed as a whole; rewards, bonuses:
how many were compared; hits_completed: the share of the paid HITs holding all their counted
answers, out of hits). Ends with one line:
    participants= fault_rate= rewards_paid_once= bonuses_paid_once= studies_left_recruiting= syncs_blocked= seconds= hits_completed=
(the worst of the two platforms for each share, the sums for the counts).
"""

import argparse
import itertools
import logging
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DAYS, SYNC_EVERY_HOURS = 7, 6
MIX = (
    ("good", 0.71),
    ("careless", 0.08),  # rejected below the quiz mark: Prolific reopens the place, MTurk is asked for one more
    ("returns", 0.05),
    ("times_out", 0.05),
    ("soft_time_out", 0.04),  # Prolific: submits here, times out there, completes after all (MTurk: good)
    ("returns_after", 0.04),
)
# the rest (3 %): approved in part on Prolific's site (on MTurk: good)
# after the week, the crowd keeps coming while the platform offers places, for at most this many rounds
MORE_ROUNDS = 40


def setup_django(folder: str) -> None:
    os.environ.update(
        DATABASE_URL=f"sqlite:///{folder}/soak.sqlite3",
        SECRET_KEY="bench-platform-soak",
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",
        DJANGO_SETTINGS_MODULE="config.settings",
        QUIZ_DEMO_BANK="1",  # the campaign's quiz comes from the built-in bank
        PROLIFIC_PROJECT_ID="61pppppppppppppppppppppp",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def behaviour(rng: random.Random, platform: str) -> str:
    draw, total = rng.random(), 0.0
    for name, share in MIX:
        total += share
        if draw < total:
            return name if platform == "prolific" or name not in ("returns_after", "soft_time_out") else "good"
    return "partial" if platform == "prolific" else "good"


def campaign_for(platform: str, participants: int):
    """A campaign with a qualification quiz: quiz seats for about half the participants and paid
    seats (3 workers a HIT, one dialogue each) for about a third of them."""
    from decimal import Decimal

    from annotation.models import Dialogue, Turn
    from labeling.models import Campaign
    from labeling.services import qualification
    from labeling.services.campaigns import create_campaign
    from labeling.work.hits import build_hits

    campaign = create_campaign(
        f"Soak on {platform}",
        fallback_choices=["Neutral", "Joyful", "Sad"],
        currency="GBP" if platform == "prolific" else "USD",
        dialogues_per_hit=1,
        quiz_per_hit=1,
        approval_quiz_mark=1,
        quiz_pass_mark=1,
        below_mark=Campaign.REJECT,
        qualification_required=True,
        qualification_items=2,
        qualification_mark=2,
        qualification_reward=Decimal("2.70"),
    )
    dialogues = []
    for index in range(max(1, participants // 9)):
        dialogue = Dialogue.objects.create(position=index, content_hash=f"{platform}-{index}", turn_count=2)
        for position in range(2):
            Turn.objects.create(dialogue=dialogue, position=position, text=f"Line {position} of {platform} {index}.")
        dialogues.append(dialogue)
    build_hits(campaign, dialogues, seed=3)
    qualification.build_qualification_hit(campaign, max(1, participants // 2), seed=5)
    return campaign


def soak(platform: str, participants: int, fault_rate: float, seed: int):
    from labeling.platforms import standin
    from labeling.platforms.standin.crowd import StudyRun
    from labeling.platforms.standin.faults import FaultPlan

    rng = random.Random(seed)
    stand_in = standin.ProlificStandIn() if platform == "prolific" else standin.MTurkStandIn()
    stand_in.faults = FaultPlan(rate=fault_rate, seed=seed)
    standin.install(stand_in)
    run = StudyRun(campaign_for(platform, participants), stand_in)
    run.publish()
    people = [(f"{platform[0]}{index:04d}W", behaviour(rng, platform)) for index in range(participants)]
    ticks = DAYS * 24 // SYNC_EVERY_HOURS
    arrivals = [people[tick::ticks] for tick in range(ticks)]
    qualified_later: list[str] = []
    for tick in range(ticks):
        for person in qualified_later:  # back for the paid work, once the quiz was settled
            run.arrive(person, "good")
        qualified_later = []
        for person, does in arrivals[tick]:
            if run.arrive(person, does) == "submitted":
                qualified_later.append(person)
        run.sync()
        run.pass_time(SYNC_EVERY_HOURS)
    fill_open_places(run, qualified_later, itertools.count(participants), platform)
    for _ in range(3):  # the last work reviewed (and, on MTurk, auto-approved)
        run.pass_time(30)
        run.sync()
    run.close()
    run.sync()
    run.settle()
    standin.uninstall()
    return run.finish()


def fill_open_places(run, qualified_later: list[str], newcomers, platform: str) -> None:
    """As a real crowd does: while a paid HIT lacks answers, people keep taking the places the
    platform offers (a rejected or returned one offered again, a timed-out one reopened), the
    qualified coming back for the paid work; a sync and six hours between rounds."""
    from labeling.platforms.standin.crowd import hits_completed, open_places

    for _ in range(MORE_ROUNDS):
        if hits_completed(run.campaign)[0] == 1.0:
            return
        returning, qualified_later = qualified_later, []
        for person in returning:
            run.arrive(person, "good")
        for _place in range(open_places(run)):
            person = f"{platform[0]}{next(newcomers):04d}W"
            if run.arrive(person, "good") == "submitted":
                qualified_later.append(person)
        run.sync()
        run.pass_time(SYNC_EVERY_HOURS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=500)
    parser.add_argument("--fault-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.participants < 10 or not 0 <= args.fault_rate < 0.5:
        parser.error("--participants must be at least 10 and --fault-rate within 0..0.5")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="platform-soak-") as folder:
        setup_django(folder)
        from labeling.platforms import calls
        from labeling.platforms.standin.crowd import CLOCK

        calls.sleep = lambda seconds: None  # retries are counted, not waited
        logging.getLogger("labeling.platforms").setLevel(logging.ERROR)  # each fault is logged otherwise
        reports = []
        with CLOCK.running():
            for platform in ("prolific", "mturk"):
                report = soak(platform, args.participants, args.fault_rate, args.seed)
                print(report.line(), flush=True)
                reports.append(report)
    print(
        f"participants={sum(r.participants for r in reports)} fault_rate={args.fault_rate:.2f} "
        f"rewards_paid_once={min(r.rewards_paid_once for r in reports):.3f} "
        f"bonuses_paid_once={min(r.bonuses_paid_once for r in reports):.3f} "
        f"studies_left_recruiting={sum(r.studies_left_recruiting for r in reports)} "
        f"syncs_blocked={sum(r.syncs_blocked for r in reports)} seconds={time.monotonic() - started:.0f} "
        f"hits_completed={min(r.hits_completed for r in reports):.3f}"
    )


if __name__ == "__main__":
    main()
