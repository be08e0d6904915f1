"""Can a campaign at the paper's scale finish under the claim rules, with a realistic crowd?

Builds about 700 HITs of 3 seats (15 dialogues and 5 quiz screens each, the default pool rule:
quiz items shared by a HIT's seats, QUIZ_MAX_EXPOSURES=3, a pool of exactly the items the
pre-publish check says it needs) and lets a crowd whose activity follows a long tail claim
through the real claim action (labeling.actions.claim.claim_next_hit), answer every screen
(labeling.actions.answer.save_response) and submit (labeling.actions.submit.submit_assignment),
until no one can: a worker stops when they have done their share of HITs or the claim gives them
none. Who acts next is drawn at random, weighted by the HITs each has left to do, so the busy
workers are the ones still there at the end, when the last seats are taken.

With the study flow on (the default; --no-study-flow turns it off): the campaign has the demo's
consent, instructions and three practice items; each worker meets them first through the flow's
writers (labeling.study_flow.progress) and claims only once the gate says the work is open to
them (progress.cleared, what the claim view asks), as a person's pages do. A share declines
(--decline-share) and a share fails the practice twice (--fail-share): they leave without a seat,
arriving besides the crowd that works (the same crowd, drawn the same way, as with the flow off),
so the figures show what the flow changes for the seats: nothing is taken by those who leave.

The crowd: most workers do 1 to 3 HITs, some 4 to 15, a few (--heavy-share) 30 or more
(--heavy-min to --heavy-max); workers join until their HITs add up to --crowd-margin times the
seats. Building uses bulk inserts; every claim, answer and submission goes through the actions.

    DEBUG=1 .venv/bin/python bench/campaign_liveness.py                  # the paper's scale, defaults
    DEBUG=1 .venv/bin/python bench/campaign_liveness.py --items-per-seat # contrast: QUIZ_ITEMS_PER_SEAT=1

Ends with `hits= seats= workers= completed_seats= stranded_seats= pool_items= max_hits_per_worker=`.

    DEBUG=1 .venv/bin/python bench/campaign_liveness.py --no-study-flow  # contrast: no consent, no practice
"""

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LINES = (
    "Did you lock the back door?",
    "I think so, why are you whispering?",
    "Because someone is walking around downstairs.",
    "The letter finally came this morning.",
    "Don't keep me waiting, what does it say?",
    "We leave for the coast tomorrow.",
)


def setup(database_url: str, items_per_seat: bool) -> None:
    os.environ.update(DATABASE_URL=database_url, SECRET_KEY="bench-liveness", DEBUG="1")
    os.environ["QUIZ_ITEMS_PER_SEAT"] = "1" if items_per_seat else "0"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def make_dialogues(count: int, offset: int, rng: random.Random) -> list:
    """`count` dialogues of 2 to 4 turns, bulk-inserted."""
    from annotation.models import Dialogue, Turn

    sizes = [rng.choice((2, 3, 3, 4)) for _ in range(count)]
    dialogues = Dialogue.objects.bulk_create(
        [Dialogue(position=offset + i, content_hash=f"live-{offset + i}", turn_count=n) for i, n in enumerate(sizes)],
        batch_size=2000,
    )
    turns = [
        Turn(dialogue=d, position=p, text=f"{rng.choice(LINES)} ({d.position}.{p})")
        for d, n in zip(dialogues, sizes, strict=True)
        for p in range(n)
    ]
    Turn.objects.bulk_create(turns, batch_size=5000)
    return dialogues


def build(args, rng: random.Random):
    """The campaign, its pool (exactly what the pre-publish check says it needs) and its HITs."""
    from django.conf import settings

    from annotation.models import Label
    from labeling.crowd.liveness import pool_items_needed
    from labeling.models import Campaign, QuizQuestion
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.work.hits import build_hits

    seats, quiz = 3, 5
    pool_size = pool_items_needed(args.hits, seats, quiz, settings.QUIZ_MAX_EXPOSURES, settings.QUIZ_ITEMS_PER_SEAT)
    work = make_dialogues(args.hits * 15, 0, rng)
    pool = make_dialogues(pool_size, len(work), rng)
    labels = list(Label.objects.filter(name__in=["Sad", "Joyful", "Neutral"]))
    QuizQuestion.objects.bulk_create(
        [QuizQuestion(dialogue=d, text="", gold_label=rng.choice(labels), source="imported") for d in pool],
        batch_size=2000,
    )
    from labeling.study_flow.demo import DEMO_FLOW

    campaign = create_campaign(
        "liveness",
        fallback_choices=["Neutral", "Sad", "Joyful"],
        workers_per_hit=seats,
        quiz_per_hit=quiz,
        study_flow=DEMO_FLOW if args.study_flow else {},
    )
    build_hits(campaign, work, seed=args.seed)
    set_campaign_status(campaign, Campaign.OPEN)
    return campaign, pool_size


def crowd_shares(args, seats: int, rng: random.Random) -> list[int]:
    """HITs each worker will do, from a long tail, until they add up to crowd_margin x seats."""
    shares: list[int] = []
    while sum(shares) < args.crowd_margin * seats:
        roll = rng.random()
        if roll < args.heavy_share:
            shares.append(rng.randint(args.heavy_min, args.heavy_max))
        elif roll < args.heavy_share + 0.15:
            shares.append(rng.randint(4, 15))
        else:
            shares.append(rng.randint(1, 3))
    return shares


def make_workers(count: int, first: int = 0) -> list:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from labeling.services.workers import worker_for_user

    unusable = make_password(None)
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"crowd{i}", password=unusable) for i in range(first, first + count)]
    )
    return [worker_for_user(user) for user in users]


def walk_the_flow(worker, campaign, outcome: str) -> None:
    """The steps before the work, through the flow's writers: passed, declined, or failed twice."""
    from labeling.study_flow import progress

    if outcome == "passes":
        progress.walk_as_simulated(worker, campaign)
    elif outcome == "declines":
        progress.decide_consent(worker, campaign, False)
    else:
        progress.decide_consent(worker, campaign, True)
        progress.record(worker.pk, campaign.pk, "instructions", "instructions_read")
        items = campaign.study_flow["practice"]["items"]
        for _attempt in range(campaign.study_flow["practice"]["retries"] + 1):
            for index, item in enumerate(items):
                wrong = next(choice for choice in item["choices"] if choice != item["answer"])
                progress.answer_practice(worker, campaign, index, wrong)


def do_one_hit(worker, campaign) -> bool:
    """Claim (once the study flow's gate opens), answer every screen, submit: through the actions.
    False when no HIT is given."""
    from labeling.actions.answer import save_response
    from labeling.actions.claim import claim_next_hit
    from labeling.actions.submit import submit_assignment
    from labeling.models import Response, seat_items_q
    from labeling.study_flow import progress

    if campaign.study_flow and not progress.cleared(worker, campaign):
        return False  # declined, or failed the practice: no claim, nothing taken
    assignment = claim_next_hit(worker, campaign)
    if assignment is None:
        return False
    for item in assignment.hit.items.filter(seat_items_q(assignment.seat)):
        save_response(assignment, item, label_name=item.choices[0], method=Response.TOP3)
    submit_assignment(assignment)
    return True


def run_crowd(campaign, shares: list[int], rng: random.Random, args) -> Counter:
    """Workers meet the study flow first (when on), then act one HIT at a time, drawn weighted by
    the HITs they have left, until none can. With the flow on, those who decline or fail the
    practice arrive besides them (their own random draws, so the working crowd is the same)."""
    workers, leavers = make_workers(len(shares)), []
    if campaign.study_flow:
        leaving = round(len(shares) * (args.decline_share + args.fail_share))
        declining = round(len(shares) * args.decline_share)
        leavers = make_workers(leaving, first=len(shares))
        for index, worker in enumerate(leavers):
            walk_the_flow(worker, campaign, "declines" if index < declining else "fails")
        for worker in workers:
            walk_the_flow(worker, campaign, "passes")
    left = dict(enumerate(shares))
    done: Counter = Counter()
    while left:
        who = rng.choices(list(left), weights=list(left.values()))[0]
        if do_one_hit(workers[who], campaign):
            done[who] += 1
            left[who] -= 1
            if left[who] == 0:
                del left[who]
        else:
            del left[who]  # the claim gives them nothing: they leave
    assert not any(do_one_hit(worker, campaign) for worker in leavers)  # they ask again: the gate keeps them out
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=700)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--heavy-share", type=float, default=0.03, help="share of workers doing 30+ HITs (0.03)")
    parser.add_argument("--heavy-min", type=int, default=30)
    parser.add_argument("--heavy-max", type=int, default=80)
    parser.add_argument("--crowd-margin", type=float, default=1.1, help="the crowd's HITs / seats (1.1)")
    parser.add_argument("--items-per-seat", action="store_true", help="contrast: QUIZ_ITEMS_PER_SEAT=1")
    parser.add_argument(
        "--no-study-flow", dest="study_flow", action="store_false", help="contrast: no consent/practice"
    )
    parser.add_argument("--decline-share", type=float, default=0.05, help="share of workers declining consent (0.05)")
    parser.add_argument("--fail-share", type=float, default=0.05, help="share of workers failing the practice (0.05)")
    parser.add_argument("--database-url", default="", help="a scratch database (default: a throwaway SQLite file)")
    args = parser.parse_args()
    # in memory where there is a tmpfs: SQLite syncs every commit to disk, and a claim is a commit
    folder = tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None)
    setup(args.database_url or f"sqlite:///{folder.name}/liveness.sqlite3", args.items_per_seat)
    from labeling.models import Assignment

    rng = random.Random(args.seed)
    started = time.perf_counter()
    campaign, pool_size = build(args, rng)
    seats = campaign.hits.count() * 3
    shares = crowd_shares(args, seats, rng)
    print(f"build_s={time.perf_counter() - started:.0f} crowd_hits={sum(shares)} heavy_workers="
          f"{sum(share >= args.heavy_min for share in shares)} light_workers={sum(share <= 3 for share in shares)}")  # fmt: skip
    started = time.perf_counter()
    done = run_crowd(campaign, shares, rng, args)
    completed = Assignment.objects.filter(hit__campaign=campaign).done().count()
    print(f"crowd_s={time.perf_counter() - started:.0f} workers_who_worked={len(done)} study_flow={args.study_flow}")
    if campaign.study_flow:
        from labeling.models import StudyStep

        steps = Counter(StudyStep.objects.filter(campaign=campaign).values_list("step", flat=True))
        print(f"declined={steps['declined']} practice_failed={steps['practice_failed']} held_by_them="
              f"{Assignment.objects.filter(worker__study_steps__step__in=['declined', 'practice_failed']).count()}")  # fmt: skip
    print(
        f"hits={campaign.hits.count()} seats={seats} workers={len(shares)} completed_seats={completed} "
        f"stranded_seats={seats - completed} pool_items={pool_size} max_hits_per_worker={max(done.values(), default=0)}"
    )


if __name__ == "__main__":
    main()
