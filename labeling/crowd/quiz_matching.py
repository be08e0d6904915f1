"""Quiz items that look like the HIT's own work: for each quiz place of a HIT, the pool item
nearest one of that HIT's work screens. Plain data, no Django.

A worker who cannot read answers off a page can still guess which screens are quiz from what a page
shows: a pool drawn from other films than the work has other turn counts, other lengths and other
suggested labels, and a classifier over those tells quiz from work (bench/quiz_tells.py: 0.81 to
0.93 balanced accuracy with a random draw). Drawing, for each quiz place, the item that matches a
work screen of the same HIT on exactly those observables makes the quiz screens a sample of the
HIT's own work screens as far as the page goes.

The search is stratified: the pool is bucketed by (top suggestion, turn count) and by turn count;
a target looks in its own bucket first, then among items of its turn count, then one turn more or
less, then anywhere, and within the first non-empty tier takes the nearest by `distance` among the
WINDOW items nearest in length (ties broken by the caller's random generator).
"""

import bisect
import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ScreenProfile:
    """What a label screen shows, as far as telling quiz from work goes."""

    turns: int
    chars: int  # all turns' text
    target_chars: int  # the turn asked about
    choices: tuple[str, ...]  # the three offered, best first (folded names)

    @property
    def top(self) -> str:
        return self.choices[0] if self.choices else ""


def distance(a: ScreenProfile, b: ScreenProfile) -> float:
    """How differently two screens look: the top suggestion and each other choice not shared,
    the turn count, and the (log) lengths of the dialogue and of the asked turn. 0: alike."""
    shared = len(set(a.choices) & set(b.choices))
    return (
        2.0 * (a.top != b.top)
        + 1.0 * (max(len(a.choices), len(b.choices)) - shared)
        + 1.5 * abs(a.turns - b.turns)
        + 3.0 * abs(math.log((a.chars + 10) / (b.chars + 10)))
        + 2.0 * abs(math.log((a.target_chars + 5) / (b.target_chars + 5)))
    )


def targets_for_hit(work: Sequence[ScreenProfile], places: int, rng: random.Random) -> list[ScreenProfile]:
    """The work screens of one HIT that its `places` quiz items are matched to: distinct ones
    while there are enough, drawn at random (so the quiz follows the HIT's own mix)."""
    if places == 0:
        return []
    if not work:
        raise ValueError("a HIT with quiz places needs at least one work screen to match them to")
    if len(work) >= places:
        return rng.sample(list(work), places)
    return [*work, *rng.choices(list(work), k=places - len(work))]


# a tier's candidates nearest in length that `distance` weighs in full (the rest are farther)
WINDOW = 48


class _Bucket:
    """Item ids sorted by dialogue length, so the ones nearest a target's length are found by
    bisection; spent ids are skipped, and dropped once they pile up."""

    def __init__(self, ids: list[int], profiles: Mapping[int, ScreenProfile]) -> None:
        self.ids = sorted(ids, key=lambda i: (profiles[i].chars, i))
        self.keys = [profiles[i].chars for i in self.ids]

    def nearest_in_length(self, chars: int, left: dict[int, int], taken_here: set[int]) -> list[int]:
        found: list[int] = []
        skipped = 0
        low = bisect.bisect_left(self.keys, chars) - 1
        high = low + 1
        while len(found) < WINDOW and (low >= 0 or high < len(self.ids)):
            if high < len(self.ids) and (low < 0 or self.keys[high] - chars <= chars - self.keys[low]):
                item_id, high = self.ids[high], high + 1
            else:
                item_id, low = self.ids[low], low - 1
            if left[item_id] > 0 and item_id not in taken_here:
                found.append(item_id)
            else:
                skipped += 1
        if skipped > 4 * WINDOW:
            kept = [index for index, item_id in enumerate(self.ids) if left[item_id] > 0]
            self.ids, self.keys = [self.ids[i] for i in kept], [self.keys[i] for i in kept]
        return found


class _Index:
    """The candidates by (top, turns) and by turns. A target looks at its own (top, turns)
    bucket, then its turn count, then one turn more or less, then anywhere: the turn count first,
    since it shows most (a long dialogue among short ones) and a pool from other films differs in
    it most."""

    def __init__(self, candidates: Mapping[int, ScreenProfile], left: dict[int, int]) -> None:
        self.profiles, self.left = candidates, left
        by_top_turns: dict[tuple, list[int]] = defaultdict(list)
        by_turns: dict[int, list[int]] = defaultdict(list)
        for item_id, profile in candidates.items():
            by_top_turns[(profile.top, profile.turns)].append(item_id)
            by_turns[profile.turns].append(item_id)
        self.by_top_turns = {key: _Bucket(ids, candidates) for key, ids in by_top_turns.items()}
        self.by_turns = {key: _Bucket(ids, candidates) for key, ids in by_turns.items()}
        self.everything = _Bucket(list(candidates), candidates)

    def _tiers(self, target: ScreenProfile) -> list[list[_Bucket | None]]:
        turns = target.turns
        return [
            [self.by_top_turns.get((target.top, turns))],
            [self.by_turns.get(turns)],
            [self.by_turns.get(turns - 1), self.by_turns.get(turns + 1)],
            [self.everything],
        ]

    def nearest(self, target: ScreenProfile, taken_here: set[int], rng: random.Random) -> int | None:
        for buckets in self._tiers(target):
            open_ids = [
                item_id
                for bucket in buckets
                if bucket is not None
                for item_id in bucket.nearest_in_length(target.chars, self.left, taken_here)
            ]
            if open_ids:
                return min(open_ids, key=lambda i: (distance(target, self.profiles[i]), rng.random()))
        return None


def match(
    targets: Sequence[Sequence[ScreenProfile]],
    candidates: Mapping[int, ScreenProfile],
    uses_left: Mapping[int, int],
    rng: random.Random,
) -> list[list[int]] | None:
    """For each HIT (`targets`: per HIT, one work profile per quiz place), one candidate id per
    place, nearest first: never one id twice in a HIT, each id at most `uses_left[id]` times in
    all. Places are served in a random order across HITs, so no HIT always gets the leftovers.
    None when the candidates run out."""
    left = {item_id: uses_left.get(item_id, 0) for item_id in candidates}
    if sum(left.values()) < sum(len(places) for places in targets):
        return None
    index = _Index(candidates, left)
    chosen: list[list[int | None]] = [[None] * len(places) for places in targets]
    order = [(hit, place) for hit, places in enumerate(targets) for place in range(len(places))]
    rng.shuffle(order)
    taken: list[set[int]] = [set() for _ in targets]
    for hit, place in order:
        item_id = index.nearest(targets[hit][place], taken[hit], rng)
        if item_id is None:
            return None
        chosen[hit][place] = item_id
        taken[hit].add(item_id)
        left[item_id] -= 1
    return [[item_id for item_id in places if item_id is not None] for places in chosen]
