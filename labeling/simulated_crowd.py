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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q

from annotation.demo_corpus.generator import normalised
from labeling.actions.answer import save_response
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.label_sets import campaign_labels
from labeling.models import HIT, Assignment, Campaign, HITItem, Response, Worker, seat_items_q
from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits

# the order the page shows: the spammer clicks the first
from labeling.task_types.last_turn_label.screen import choices_shown
from labeling.workers import worker_for_user

AMBIGUOUS_SPLIT = 0.6  # a reliable worker's share for the writer's label on a two-label line


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
    """Fill every regular HIT of the campaign but the last `leave_open` with its required workers
    from `crowd` (the least busy first, drawn at random, so each HIT gets a different mix), each answering every screen and submitting.
    HITs already full are skipped, so a second run adds nothing."""
    crowd = list(crowd)
    rng = random.Random(seed)
    workers = [(profile, _worker(profile)) for profile in crowd]
    label_names = list(campaign_labels(campaign).values_list("name", flat=True))
    report = CrowdReport(quiz_correct={profile.username: [] for profile in crowd})
    hits = list(campaign.hits.filter(kind=HIT.REGULAR).order_by("position", "pk"))
    targets = hits[: max(0, len(hits) - leave_open)]
    targets += list(campaign.hits.filter(kind=HIT.FOLLOW_UP).order_by("position", "pk"))
    load = {worker.pk: 0 for _, worker in workers}
    for hit in _still_open(targets):
        report.hits += 1
        for _ in range(hit.required_workers - _seats_done(hit)):
            profile, worker = _next_free(workers, hit, load, rng)
            load[worker.pk] += 1
            assignment = claim_next_hit(worker, campaign)
            if assignment is None or assignment.hit_id != hit.pk:
                raise RuntimeError(f"{profile.username} was not given HIT {hit.pk} (got {assignment})")
            report.responses += _answer_all(assignment, profile, truth, label_names, rng)
            result = submit_assignment(assignment)
            report.assignments += 1
            report.quiz_correct[profile.username].append(result.quiz_correct)
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


def _worker(profile: Profile) -> Worker:
    user, created = get_user_model().objects.get_or_create(
        username=profile.username, defaults={"email": f"{profile.username}@example.org"}
    )
    if created:
        user.set_unusable_password()  # simulated: nobody signs in as them
        user.save(update_fields=["password"])
    return worker_for_user(user)


def _still_open(hits: list[HIT]) -> list[HIT]:
    return [hit for hit in hits if _seats_done(hit) < hit.required_workers]


def _seats_done(hit: HIT) -> int:
    return Assignment.objects.done().filter(hit=hit).count()


def _next_free(
    workers: list[tuple[Profile, Worker]], hit: HIT, load: dict[int, int], rng: random.Random
) -> tuple[Profile, Worker]:
    """A worker who never held this HIT, among the least busy so far, drawn at random: every
    HIT gets a different mix, so no pair of workers always agrees with itself."""
    # never a worker who met one of its items before (a follow-up HIT's item was in an earlier HIT)
    turns = HITItem.objects.filter(hit=hit, target_turn__isnull=False).values("target_turn_id")
    held = set(Assignment.objects.filter(hit__items__target_turn_id__in=turns).values_list("worker_id", flat=True))
    held |= set(hit.assignments.values_list("worker_id", flat=True))
    free = [(profile, worker) for profile, worker in workers if worker.pk not in held]
    if not free:
        raise RuntimeError(f"HIT {hit.pk} needs more simulated workers than the {len(workers)} there are")
    least = min(load[worker.pk] for _, worker in free)
    return rng.choice([(profile, worker) for profile, worker in free if load[worker.pk] == least])


def _answer_all(
    assignment: Assignment, profile: Profile, truth: dict[str, Truth], label_names: list[str], rng: random.Random
) -> int:
    items = HITItem.objects.filter(seat_items_q(assignment.seat), hit_id=assignment.hit_id).select_related(
        "target_turn", "quiz_question__gold_label"
    )
    # one commit for the HIT's answers (a person's autosaves commit one by one; SQLite pays for each)
    with transaction.atomic():
        for item in items.order_by("position"):
            shown = choices_shown(assignment, item)
            given = choose_answer(profile, _truth_of(item, truth), shown, label_names, rng)
            method = Response.TOP3 if given in item.choices else Response.OTHER_LIST
            seconds = rng.uniform(*profile.seconds)
            save_response(assignment, item, label_name=given, method=method, seconds_spent=seconds)
    return len(items)


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
