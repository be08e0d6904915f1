"""Simulated annotators for the demo: workers of known reliability take a campaign's HITs through
the same services the annotator pages call (`claim_next_hit`, `save_response`, `submit_assignment`),
so the dashboard's kappa, worker table, Dawid-Skene disagreement, quiz scores and payments come
from answers given exactly as a person's would be.

A worker knows an item's true label (the demo corpus's `truth.jsonl`, looked up by the last
turn's text; a quiz item's gold label) and gives it with probability `accuracy`; on a line that
fits two labels a reliable worker still splits between them; otherwise they pick a wrong label,
one of the three suggestions or one from the full list. The spammer always takes the first
suggestion in the order the page shows it (drawn per assignment), in about a second.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.demo_corpus.generator import normalised
from labeling.actions.answer import save_response
from labeling.actions.claim import claim_next_hit, open_hits_for
from labeling.actions.submit import submit_assignment
from labeling.models import HIT, Assignment, Campaign, HITItem, Response, Worker, seat_items_q
from labeling.services.workers import worker_for_user
from labeling.study_flow import config as study_config
from labeling.study_flow import progress as study_progress
from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits

# the order the page shows: the spammer clicks the first
from labeling.task_types.last_turn_label.screen import choices_shown
from labeling.work.label_sets import campaign_labels

AMBIGUOUS_SPLIT = 0.6  # a reliable worker's share for the writer's label on a two-label line
# workers who join when the crowd above cannot fill a seat (the claim rules keep a worker off a HIT
# they held, a dialogue they hold elsewhere, a quiz item they have seen)
EXTRA_PREFIX = "sim-extra-"
EXTRA_ACCURACY = (0.9, 0.8, 0.7)


@dataclass(frozen=True)
class Profile:
    username: str
    accuracy: float  # chance of giving the true label
    seconds: tuple[float, float]  # time on a screen, drawn uniformly
    spammer: bool = False


DEFAULT_CROWD: tuple[Profile, ...] = (
    Profile("sim-careful-1", 0.93, (7.0, 16.0)),
    Profile("sim-careful-2", 0.9, (6.0, 14.0)),
    Profile("sim-careful-3", 0.88, (5.0, 12.0)),
    Profile("sim-noisy-1", 0.65, (3.5, 8.0)),
    Profile("sim-noisy-2", 0.55, (3.0, 7.0)),
    Profile("sim-spammer", 0.0, (0.6, 1.4), spammer=True),
)


@dataclass(frozen=True)
class Truth:
    label: str
    alt: str | None = None


def read_truth(path: Path) -> dict[str, Truth]:
    """truth.jsonl (one record per dialogue: last_turn, label, alt) keyed by the normalised last turn."""
    truth: dict[str, Truth] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
            if record.get("label"):
                truth.setdefault(normalised(record["last_turn"]), Truth(record["label"], record.get("alt")))
    return truth


def choose_answer(
    profile: Profile, truth: Truth | None, choices: Sequence[str], label_names: Sequence[str], rng: random.Random
) -> str:
    """The label name this worker gives on a screen showing `choices` in that order (pure)."""
    if profile.spammer or truth is None:
        return choices[0] if profile.spammer else rng.choice(list(choices))
    if rng.random() < profile.accuracy:
        if truth.alt and rng.random() > AMBIGUOUS_SPLIT:
            return truth.alt
        return truth.label
    wrong_choices = [c for c in choices if c != truth.label]
    if wrong_choices and rng.random() < 0.6:
        return rng.choice(wrong_choices)
    return rng.choice([name for name in label_names if name != truth.label])


@dataclass
class CrowdReport:
    assignments: int = 0
    responses: int = 0
    hits: int = 0
    quiz_correct: dict[str, list[int]] | None = None


def simulate_campaign(
    campaign: Campaign,
    truth: dict[str, Truth],
    *,
    crowd: Iterable[Profile] = DEFAULT_CROWD,
    leave_open: int = 2,
    seed: int = 15,
) -> CrowdReport:
    """Fill the campaign's HITs but the last `leave_open` regular ones (left to people) seat by
    seat, each answering every screen and submitting. Every seat is taken by `claim_next_hit`, the
    claim action people use: the simulation only picks who arrives next (the least busy, drawn at
    random, so each HIT gets a different mix), never the HIT. A worker whose claim would land on a
    HIT left to people does not claim; when no one of the crowd can take a seat still to fill, one
    more simulated worker joins, so the crowd is as large as the claim rules (no HIT twice, no
    dialogue twice, no quiz item twice) need. HITs already full are skipped: a second run adds nothing."""
    rng = random.Random(seed)
    members = [(profile, _worker(profile)) for profile in crowd]
    label_names = list(campaign_labels(campaign).values_list("name", flat=True))
    report = CrowdReport(quiz_correct={profile.username: [] for profile, _ in members})
    regular = list(campaign.hits.filter(kind=HIT.REGULAR).order_by("position", "pk").values_list("pk", flat=True))
    left_to_people = set(regular[max(0, len(regular) - leave_open) :])
    to_fill = set(campaign.hits.exclude(pk__in=left_to_people).values_list("pk", flat=True))
    load = {worker.pk: 0 for _, worker in members}
    filled: set[int] = set()
    while _still_open(to_fill):
        arriving = _next_arrival(members, campaign, to_fill, load, rng)
        if arriving is None:
            arriving = _join(members, load, report)
            if not _claims_one_of(arriving[1], campaign, to_fill):
                break  # what is left sits behind the HITs left to people: theirs too
        profile, worker = arriving
        # the campaign's study flow first (consent, instructions, practice), by the same writers
        # as a person's pages, so the funnel counts the simulated crowd as it counts people
        study_progress.walk_as_simulated(worker, campaign)
        assignment = claim_next_hit(worker, campaign)
        if assignment is None or assignment.hit_id not in to_fill:
            raise RuntimeError(f"{profile.username}'s claim gave {assignment}, not a HIT to fill")
        load[worker.pk] += 1
        filled.add(assignment.hit_id)
        _record(worker, campaign, study_config.WORK)
        report.responses += _answer_all(assignment, profile, truth, label_names, rng)
        result = submit_assignment(assignment)
        report.assignments += 1
        report.quiz_correct[profile.username].append(result.quiz_correct)
    report.hits = len(filled)
    return report


def simulate_until_settled(campaign: Campaign, truth: dict[str, Truth], *, seed: int = 15) -> CrowdReport:
    """Answer every HIT (none left open), then the follow-up HITs the campaign's redundancy policy
    opens, round after round, until it opens none (at most the cap's rounds)."""
    total = CrowdReport()
    for round_ in range(campaign.redundancy_cap + 1):
        report = simulate_campaign(campaign, truth, leave_open=0, seed=seed + round_)
        total.hits, total.assignments = total.hits + report.hits, total.assignments + report.assignments
        total.responses += report.responses
        if not create_follow_up_hits(campaign, seed=seed + round_):
            break
    return total


def _record(worker: Worker, campaign: Campaign, step: str) -> None:
    if campaign.study_flow:
        study_progress.record(worker.pk, campaign.pk, step)


def _worker(profile: Profile) -> Worker:
    user, created = get_user_model().objects.get_or_create(
        username=profile.username, defaults={"email": f"{profile.username}@example.org"}
    )
    if created:
        user.set_unusable_password()  # simulated: nobody signs in as them
        user.save(update_fields=["password"])
    return worker_for_user(user)


def _still_open(hit_ids: set[int]) -> list[int]:
    done = Counter(Assignment.objects.done().filter(hit_id__in=hit_ids).values_list("hit_id", flat=True))
    required = HIT.objects.filter(pk__in=hit_ids).values_list("pk", "required_workers")
    return [pk for pk, workers in required if done[pk] < workers]


def _claims_one_of(worker: Worker, campaign: Campaign, hit_ids: set[int]) -> bool:
    """Whether the worker's next claim lands on one of `hit_ids`: the claim action's own search
    (open_hits_for, in its claim order) read without taking anything."""
    first = open_hits_for(worker, campaign).values_list("pk", flat=True).first()
    return first is not None and first in hit_ids


def _next_arrival(
    members: list[tuple[Profile, Worker]], campaign: Campaign, to_fill: set[int], load: dict[int, int], rng
) -> tuple[Profile, Worker] | None:
    """Who comes next: the least busy members first (ties drawn at random) whose claim would take
    a seat still to fill; None when no member's would."""
    order = sorted(members, key=lambda member: (load[member[1].pk], rng.random()))
    return next((member for member in order if _claims_one_of(member[1], campaign, to_fill)), None)


def _join(members: list[tuple[Profile, Worker]], load: dict[int, int], report: CrowdReport) -> tuple[Profile, Worker]:
    """One more simulated worker, of an ordinary careful-to-noisy reliability."""
    number = sum(profile.username.startswith(EXTRA_PREFIX) for profile, _ in members) + 1
    profile = Profile(f"{EXTRA_PREFIX}{number}", EXTRA_ACCURACY[number % len(EXTRA_ACCURACY)], (4.0, 12.0))
    member = (profile, _worker(profile))
    members.append(member)
    load[member[1].pk] = 0
    report.quiz_correct[profile.username] = []
    return member


def _answer_all(
    assignment: Assignment, profile: Profile, truth: dict[str, Truth], label_names: list[str], rng: random.Random
) -> int:
    """Answer every screen, each in the seconds the profile draws, on the simulation's own clock:
    the assignment counts as accepted that many seconds ago and each answer as given when its
    screen's seconds were up, the last one now. The server bounds a screen's seconds by the time
    since the last answer (labeling.actions.answer), so answers given milliseconds apart in real
    time would all count as instant and every simulated worker would look too fast."""
    items = list(
        HITItem.objects.filter(seat_items_q(assignment.seat), hit_id=assignment.hit_id)
        .select_related("target_turn", "quiz_question__gold_label")
        .order_by("position")
    )
    planned = []  # (item, label given, method, seconds), drawn in the order a person answers them
    for item in items:
        shown = choices_shown(assignment, item)
        given = choose_answer(profile, _truth_of(item, truth), shown, label_names, rng)
        method = Response.TOP3 if given in item.choices else Response.OTHER_LIST
        planned.append((item, given, method, rng.uniform(*profile.seconds)))
    moment = _accepted_seconds_ago(assignment, sum(seconds for *_, seconds in planned))
    # one commit for the HIT's answers (a person's autosaves commit one by one; SQLite pays for each)
    with transaction.atomic():
        for item, given, method, seconds in planned:
            moment += timedelta(seconds=seconds)
            save_response(assignment, item, label_name=given, method=method, seconds_spent=seconds, answered_at=moment)
    return len(items)


def _accepted_seconds_ago(assignment: Assignment, seconds: float) -> datetime:
    """Move the simulated seat's acceptance `seconds` back from now (the time its worker takes on
    the HIT, well inside its time limit); returns the new acceptance time."""
    accepted = timezone.now() - timedelta(seconds=seconds)
    Assignment.objects.filter(pk=assignment.pk).update(accepted_at=accepted)
    assignment.accepted_at = accepted
    return accepted


def _truth_of(item: HITItem, truth: dict[str, Truth]) -> Truth | None:
    if item.quiz_question_id is not None:
        return Truth(item.quiz_question.gold_label.name)
    if item.target_turn is None:
        return None
    return truth.get(normalised(item.target_turn.text))


def crowd_figures(campaign: Campaign) -> dict[str, dict[str, float]]:
    """Per simulated worker: assignments and quiz answers right on average (for the command's report)."""
    rows = (
        Assignment.objects.done()
        .filter(hit__campaign=campaign, worker__user__username__startswith="sim-")
        .values("worker__user__username")
        .annotate(n=Count("pk"), quiz=Count("pk", filter=Q(quiz_correct__gte=campaign.quiz_pass_mark)))
    )
    return {row["worker__user__username"]: {"assignments": row["n"], "passed_quiz": row["quiz"]} for row in rows}
