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
less, then anywhere, and within the first non-empty tier takes the nearest by `distance` (ties
broken by the caller's random generator).
"""

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


class _Index:
    """The candidates by (top, turns) and by turns; spent ids dropped lazily. A target looks at
    its own (top, turns) bucket, then its turn count, then one turn more or less, then anywhere:
    the turn count first, since it shows most (a long dialogue among short ones) and a pool from
    other films differs in it most."""

    def __init__(self, candidates: Mapping[int, ScreenProfile], left: dict[int, int]) -> None:
        self.profiles, self.left = candidates, left
        self.by_top_turns: dict[tuple, list[int]] = defaultdict(list)
        self.by_turns: dict[int, list[int]] = defaultdict(list)
        self.everything = sorted(candidates)  # sorted: the same result for the same seed
        for item_id in self.everything:
            profile = candidates[item_id]
            self.by_top_turns[(profile.top, profile.turns)].append(item_id)
            self.by_turns[profile.turns].append(item_id)

    def _tiers(self, target: ScreenProfile) -> list[list[list[int]]]:
        turns = target.turns
        return [
            [self.by_top_turns.get((target.top, turns), [])],
            [self.by_turns.get(turns, [])],
            [self.by_turns.get(turns - 1, []), self.by_turns.get(turns + 1, [])],
            [self.everything],
        ]

    def nearest(self, target: ScreenProfile, taken_here: set[int], rng: random.Random) -> int | None:
        for buckets in self._tiers(target):
            open_ids = []
            for bucket in buckets:
                bucket[:] = [item_id for item_id in bucket if self.left[item_id] > 0]
                open_ids += [item_id for item_id in bucket if item_id not in taken_here]
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
