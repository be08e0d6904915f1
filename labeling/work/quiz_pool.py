"""The secret quiz pool: which quiz dialogues a new HIT gets, how often each is shown, when it retires.

A quiz item is a real corpus dialogue whose answer is known (QuizQuestion with a dialogue). It is
shown exactly like a work item, so nothing on the page tells it apart; only the database knows.

- draw(): reserves `seats` exposures (the HIT's required workers) on each item it hands out, in
  the transaction that writes the HITs. Rows are locked (SKIP LOCKED on PostgreSQL) and the
  counter moves by a conditional UPDATE, so two builds at once never push an item past
  QUIZ_MAX_EXPOSURES. With the default cap (3 = one HIT's seats) a quiz dialogue shared by a
  HIT's seats sits in one HIT only, exactly like a work dialogue. An item seen by one seat only
  (per-seat quiz items, QUIZ_ITEMS_PER_SEAT, or one-worker HITs) reserves one exposure per use and
  may sit in up to QUIZ_MAX_EXPOSURES different HITs, never twice in one: a pool a third the size
  of the per-seat demand serves it.
- draw(match_to=...): for new HITs of a campaign, each quiz place takes the pool item whose screen
  is nearest a work screen of the same HIT (labeling.crowd.quiz_matching: turn count, lengths,
  the three choices), so a pool from other films than the work still looks like the work. Only
  the chosen rows are locked; concurrent builds share the pool.
- seen_by(): quiz items a worker has been shown; a claim skips HITs holding one of them, so no
  worker sees a quiz item twice even when the cap lets an item into several HITs.
- record_reveals(): an answer shown in feedback (after a HIT is submitted) counts as a reveal;
  after QUIZ_RETIRE_AFTER_REVEALS of them the item retires, since workers share answers.
- A campaign's quiz items come only from its label set (draw's `label_ids`), and their three
  choices are built exactly as a work screen's (the label task type's planning.quiz_item): the
  suggestion model's top 3 within the label set, else the fallback. The known answer is not
  forced among them; where it is missing the right answer is given through "Other", as on a work
  screen, and scores as right.
- The built-in one-turn bank (labeling.crowd.quiz_bank) is public and tells itself apart by its single
  turn: it serves tests and load benchmarks only, when QUIZ_DEMO_BANK is switched on (default
  off, the demo included: `demo_setup` imports a real pool). No counter applies to it.
"""

import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet, Sum
from django.utils import timezone

from labeling.crowd import quiz_matching
from labeling.crowd.quiz_matching import ScreenProfile
from labeling.models import HITItem, QuizQuestion


class PoolTooSmall(ValueError):
    """Not enough usable quiz items for the HITs asked for; the message gives the figures."""


@dataclass(frozen=True)
class PoolStatus:
    usable: int  # items that can still go into a new HIT
    seats_left: int  # exposures still open over those items
    retired: int
    low: bool
    threshold: int


def draw(
    hit_count: int,
    per_hit: int,
    seats: int,
    *,
    rng: random.Random,
    exclude_dialogue_ids: Iterable[int] = (),
    label_ids: Iterable[int] | None = None,
    match_to: Sequence[Sequence[ScreenProfile]] | None = None,
    profiles: Callable[[list[QuizQuestion]], dict[int, ScreenProfile]] | None = None,
) -> list[list[QuizQuestion]]:
    """`per_hit` distinct quiz items for each of `hit_count` new HITs of `seats` workers, reserved.

    label_ids: the campaign's label set (campaign_labels); only items whose known answer is one
        of them are drawn, so no quiz answer lies outside the labels a work screen offers.
        None: any label.
    match_to: per HIT, `per_hit` profiles of its own work screens (quiz_matching.targets_for_hit);
        with `profiles` (what a pool item's screen would show, by item id) each place gets the
        pool item nearest its target (labeling.crowd.quiz_matching), item i of a HIT for target
        i. None: a random draw (tie-breaks, the qualification quiz).
    Call it inside the transaction that writes the HITs: a rollback gives the seats back.
    Raises PoolTooSmall when the pool cannot supply them (and the test bank is off).
    """
    if hit_count == 0 or per_hit == 0:
        return [[] for _ in range(hit_count)]
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("quiz_pool.draw reserves seats: call it inside the transaction writing the HITs")
    needed = hit_count * per_hit
    usable = _usable(seats, None if label_ids is None else list(label_ids))
    if match_to is not None and profiles is not None:
        sets = _reserve_matched(usable, seats, match_to, profiles, list(exclude_dialogue_ids), rng)
        if sets is None:
            distinct = _distinct_needed(hit_count, per_hit) if seats == 1 else needed
            return _demo_sets(hit_count, per_hit, rng, _shortage(usable, distinct, seats, label_ids is not None))
        return sets
    if seats == 1:  # an item is one seat's (per-seat quiz items, or one-worker HITs)
        sets = _reserve_spread(usable, hit_count, per_hit, list(exclude_dialogue_ids))
        if sets is None:
            shortage = _shortage(usable, _distinct_needed(hit_count, per_hit), seats, label_ids is not None)
            return _demo_sets(hit_count, per_hit, rng, shortage)
        for quiz_set in sets:
            rng.shuffle(quiz_set)
        return sets
    taken = _reserve(usable, needed, seats, list(exclude_dialogue_ids))
    if taken is None:
        return _demo_sets(hit_count, per_hit, rng, _shortage(usable, needed, seats, label_ids is not None))
    rng.shuffle(taken)
    return [taken[index * per_hit : (index + 1) * per_hit] for index in range(hit_count)]


def _distinct_needed(hit_count: int, per_hit: int) -> int:
    """Items a spread draw needs at least: each may sit in up to QUIZ_MAX_EXPOSURES of the HITs."""
    uses_per_item = max(1, min(settings.QUIZ_MAX_EXPOSURES, hit_count))
    return max(per_hit, -(-hit_count * per_hit // uses_per_item))


def _reserve_spread(
    usable, hit_count: int, per_hit: int, exclude_dialogue_ids: list[int]
) -> list[list[QuizQuestion]] | None:
    """`per_hit` items for each HIT where each item is seen by one seat: an item may go into
    several HITs (one exposure each, within QUIZ_MAX_EXPOSURES) but never twice into one, so no
    two seats of a HIT share it. Its uses are dealt round-robin over the HITs, so an item's uses
    (at most hit_count) land in distinct HITs. None when the pool is too small."""
    cap = settings.QUIZ_MAX_EXPOSURES
    needed = hit_count * per_hit
    eligible = usable.exclude(dialogue_id__in=exclude_dialogue_ids)
    locked = eligible.select_for_update(skip_locked=True, of=("self",)).order_by("?")
    uses: list[QuizQuestion] = []
    for question in locked.select_related("gold_label")[:needed]:
        uses += [question] * min(cap - question.exposures, hit_count, needed - len(uses))
        if len(uses) == needed:
            break
    if len(uses) < needed:
        return None
    _add_exposures(Counter(question.pk for question in uses), 1)
    return [uses[index::hit_count] for index in range(hit_count)]


def _reserve_matched(usable, seats: int, match_to, profiles, exclude_dialogue_ids: list[int], rng):
    """The matched draw: each place given the nearest item with uses left, then only the chosen
    rows locked (SKIP LOCKED); an item another build holds is left out and the places matched
    again, so concurrent builds share the pool instead of one locking all of it. An item serves
    (cap - exposures) // seats HITs, never two places of one. None when the pool is too small."""
    cap = settings.QUIZ_MAX_EXPOSURES
    eligible = usable.exclude(dialogue_id__in=exclude_dialogue_ids)
    found = {question.pk: question for question in eligible.select_related("gold_label")}
    shown = profiles(list(found.values()))
    for _attempt in range(_MATCH_ATTEMPTS):
        uses_left = {pk: (cap - question.exposures) // seats for pk, question in found.items()}
        chosen = quiz_matching.match(match_to, {pk: shown[pk] for pk in found}, uses_left, rng)
        if chosen is None:
            return None
        wanted = {item_id for places in chosen for item_id in places}
        locked = set(
            eligible.filter(pk__in=wanted)
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("pk", flat=True)
        )
        if locked == wanted:
            _add_exposures(Counter(item_id for places in chosen for item_id in places), seats)
            return [[found[item_id] for item_id in places] for places in chosen]
        for pk in wanted - locked:  # another build holds them
            del found[pk]
    raise PoolTooSmall("other builds hold the quiz items these HITs need; build them again")


_MATCH_ATTEMPTS = 5


def _add_exposures(uses: Counter, seats: int) -> None:
    """`seats` exposures per use, by conditional UPDATEs (they hold where row locks do not, on
    SQLite: no item passes its cap); items reaching the cap retire from new draws."""
    cap = settings.QUIZ_MAX_EXPOSURES
    for times in set(uses.values()):
        ids = [pk for pk, count in uses.items() if count == times]
        updated = QuizQuestion.objects.filter(
            pk__in=ids, exposures__lte=cap - times * seats, retired_at__isnull=True
        ).update(exposures=F("exposures") + times * seats)
        if updated != len(ids):
            raise PoolTooSmall("the quiz pool changed while these HITs were built; build them again")
    QuizQuestion.objects.filter(pk__in=list(uses), exposures__gte=cap, retired_at__isnull=True).update(
        retired_at=timezone.now()
    )


def _usable(seats: int, label_ids: list[int] | None):
    """Pool items with `seats` exposures left, their answer in `label_ids` (None: any label)."""
    usable = QuizQuestion.objects.pool().filter(exposures__lte=settings.QUIZ_MAX_EXPOSURES - seats)
    return usable if label_ids is None else usable.filter(gold_label_id__in=label_ids)


def _reserve(usable, needed: int, seats: int, exclude_dialogue_ids: list[int]) -> list[QuizQuestion] | None:
    """Lock `needed` random usable items and add `seats` to their exposures; None when too few."""
    eligible = usable.exclude(dialogue_id__in=exclude_dialogue_ids)
    locked = eligible.select_for_update(skip_locked=True, of=("self",)).order_by("?")
    picked = list(locked.select_related("gold_label")[:needed])
    if len(picked) < needed:
        return None
    _add_exposures(Counter(question.pk for question in picked), seats)
    return picked


def _shortage(usable, needed: int, seats: int, in_label_set: bool) -> str:
    cap = settings.QUIZ_MAX_EXPOSURES
    if seats > cap:
        return f"a HIT of {seats} workers needs QUIZ_MAX_EXPOSURES >= {seats} (it is {cap})"
    where = " with an answer in the campaign's label set" if in_label_set else ""
    return (
        f"these HITs need {needed} quiz dialogues but the pool has {usable.count()} usable ones{where}; "
        "add more with `manage.py import_quiz`"
    )


def _demo_sets(hit_count: int, per_hit: int, rng: random.Random, shortage: str) -> list[list[QuizQuestion]]:
    if not settings.QUIZ_DEMO_BANK:
        raise PoolTooSmall(shortage)
    bank = list(QuizQuestion.objects.demo_bank().select_related("gold_label").order_by("pk"))
    if len(bank) < per_hit:
        raise PoolTooSmall(f"{shortage} (the demo bank has only {len(bank)} questions)")
    return [rng.sample(bank, per_hit) for _ in range(hit_count)]


def seen_by(person) -> QuerySet:
    """Ids of the pool items shown to `person` (a queryset of Workers: one person's every
    landing, labeling.services.workers.same_person): on any HIT they held, the shared ones and their own
    seat's (a subquery for claims)."""
    own_seat = Q(seat=0) | Q(seat=F("hit__assignments__seat"))
    return HITItem.objects.filter(
        own_seat, hit__assignments__worker__in=person, quiz_question__dialogue__isnull=False
    ).values("quiz_question_id")


def record_reveals(question_ids: Iterable[int]) -> None:
    """Count answers shown in feedback; retire the items shown often enough. In the caller's
    transaction (the submission that shows them)."""
    ids = list(question_ids)
    if not ids:
        return
    pool_items = QuizQuestion.objects.filter(pk__in=ids, dialogue__isnull=False)
    pool_items.update(reveals=F("reveals") + 1)
    pool_items.filter(reveals__gte=settings.QUIZ_RETIRE_AFTER_REVEALS, retired_at__isnull=True).update(
        retired_at=timezone.now()
    )


def pool_status() -> PoolStatus:
    """What the dashboard shows: items left for new HITs, their open seats, and a low-pool flag."""
    cap = settings.QUIZ_MAX_EXPOSURES
    usable = QuizQuestion.objects.pool().filter(exposures__lt=cap)
    figures = usable.aggregate(exposed=Sum("exposures"))
    count = usable.count()
    retired = QuizQuestion.objects.filter(dialogue__isnull=False, retired_at__isnull=False).count()
    threshold = settings.QUIZ_POOL_LOW
    return PoolStatus(count, count * cap - (figures["exposed"] or 0), retired, count < threshold, threshold)
