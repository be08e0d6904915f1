"""The study report's crowd section: who worked, how much, how fast, for what pay, how well
(Dawid-Skene accuracy per worker), who was flagged or blocked, and the answers bought."""

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from statistics import median

import numpy as np
from django.conf import settings

from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.majority import normalise_answer
from labeling.crowd.speed import is_too_fast, median_seconds
from labeling.models import Assignment, Campaign, Worker
from labeling.platforms.costs import hourly_rate
from labeling.task_types.last_turn_label.aggregation import CrowdAnswer, known_labels
from labeling.work.policy import answers_bought


@dataclass(frozen=True)
class Spread:
    """A distribution in five figures (percentiles by linear interpolation, numpy's default)."""

    count: int
    minimum: float | None
    p10: float | None
    median: float | None
    p90: float | None
    maximum: float | None


def spread(values: list[float]) -> Spread:
    if not values:
        return Spread(0, None, None, None, None, None)
    p10, mid, p90 = (round(float(v), 4) for v in np.percentile(values, [10, 50, 90]))
    return Spread(len(values), round(float(min(values)), 4), p10, mid, p90, round(float(max(values)), 4))


@dataclass(frozen=True)
class CrowdFigures:
    workers: int
    hits: int  # counted assignments (one worker's HIT); 0 for an import (its HITs are scaffolding)
    hits_per_worker: Spread
    median_minutes_per_hit: float | None  # None when the HITs carry no timing (imported results)
    pay_per_hit: float  # the reward plus the bonus at the share of HITs that earned it
    effective_hourly_pay: float | None  # pay_per_hit at the (unrounded) median minutes per HIT
    platform: str
    platform_minimum: float | None  # the platform's minimum hourly rate in the campaign's currency
    dawid_skene_accuracy: Spread  # one value per worker
    # median seconds per dialogue screen under FAST_WORKER_MEDIAN_SECONDS; None when no answer
    # carries a time (imported results), rather than every worker flagged at 0 s
    flagged_workers: int | None
    blocked_workers: int
    answers: int
    fixed_policy_answers: int  # what `fixed` (workers_per_hit answers per item) would have bought
    policy: str


def crowd_figures(campaign: Campaign, answers: list[CrowdAnswer], *, imported: bool = False) -> CrowdFigures:
    """The crowd's figures; for an import (`imported`), only what its file holds: no HIT, time or
    pay was recorded here, and its stand-in workers are answer columns, not people to score."""
    if imported:
        return _imported_figures(campaign, answers)
    assignments = list(
        Assignment.objects.filter(hit__campaign=campaign)
        .counted()
        .values_list("worker_id", "accepted_at", "submitted_at", "quiz_correct")
    )
    per_worker = Counter(row[0] for row in assignments)
    minutes = _median_minutes(assignments)  # unrounded: the hourly pay is computed from it
    pay = _pay_per_hit(campaign, assignments)
    workers = Worker.objects.filter(pk__in=list(per_worker))
    platform = _platform(workers)
    bought = answers_bought(campaign)
    return CrowdFigures(
        workers=len(per_worker),
        hits=len(assignments),
        hits_per_worker=spread(list(per_worker.values())),
        median_minutes_per_hit=round(minutes, 4) if minutes else None,
        pay_per_hit=float(pay),
        effective_hourly_pay=float(hourly_rate(pay, Decimal(minutes))) if minutes else None,
        platform=platform,
        platform_minimum=platform_minimum(platform, campaign.currency),
        dawid_skene_accuracy=spread(list(worker_accuracy(answers).values())),
        flagged_workers=len(flagged_workers(answers)) if any(a.seconds > 0 for a in answers) else None,
        blocked_workers=workers.filter(status=Worker.BLOCKED).count(),
        answers=bought["answers"],
        fixed_policy_answers=bought["fixed_answers"],
        policy=bought["policy"],
    )


def _median_minutes(assignments) -> float | None:
    spans = [
        (submitted - accepted).total_seconds() / 60
        for _, accepted, submitted, _ in assignments
        if submitted is not None and submitted > accepted
    ]
    return median(spans) if spans else None


def _imported_figures(campaign: Campaign, answers: list[CrowdAnswer]) -> CrowdFigures:
    bought = answers_bought(campaign)
    return CrowdFigures(
        workers=len({a.worker_id for a in answers}),  # the source's answer columns
        hits=0,
        hits_per_worker=spread([]),
        median_minutes_per_hit=None,
        pay_per_hit=0.0,
        effective_hourly_pay=None,
        platform="",
        platform_minimum=None,
        dawid_skene_accuracy=spread([]),
        flagged_workers=None,
        blocked_workers=0,
        answers=bought["answers"],
        fixed_policy_answers=bought["fixed_answers"],
        policy=bought["policy"],
    )


def _pay_per_hit(campaign: Campaign, assignments) -> Decimal:
    if not assignments:
        return Decimal(campaign.reward)
    earned = sum(1 for *_, mark in assignments if mark is not None and mark >= campaign.quiz_pass_mark)
    return Decimal(campaign.reward) + Decimal(campaign.bonus) * earned / len(assignments)


def _platform(workers) -> str:
    platforms = Counter(workers.values_list("platform", flat=True))
    return platforms.most_common(1)[0][0] if platforms else Worker.SITE


def platform_minimum(platform: str, currency: str) -> float | None:
    if platform == Worker.MTURK:
        return settings.MTURK_MIN_HOURLY_RATE
    if platform == Worker.PROLIFIC:
        return getattr(settings, f"PROLIFIC_MIN_HOURLY_RATE_{currency}", None)
    return None


def worker_accuracy(answers: list[CrowdAnswer], extra: list[tuple] = ()) -> dict:
    """Dawid-Skene's accuracy per worker over the answers with typed labels normalised (the gold
    rule); `extra` adds (item, rater, label) triples, e.g. a model counted as one more rater."""
    known = known_labels()
    triples = [(a.turn_id, a.worker_id, normalise_answer(a.text, known)) for a in answers]
    return dawid_skene([*triples, *extra]).worker_accuracy


def flagged_workers(answers: list[CrowdAnswer]) -> set[int]:
    seconds = [(a.worker_id, a.seconds) for a in answers]
    counts = Counter(worker for worker, _ in seconds)
    return {
        worker
        for worker, value in median_seconds(seconds).items()
        if is_too_fast(
            value,
            counts[worker],
            threshold=settings.FAST_WORKER_MEDIAN_SECONDS,
            min_answers=settings.FAST_WORKER_MIN_ANSWERS,
        )
    }
