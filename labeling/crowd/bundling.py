"""How a HIT is put together, as plain data: which dialogues and quiz questions go in which HIT,
in which order, and which three labels each screen offers. No Django import.

the label task type's planning feeds it ids; `labeling.work.hits.write_hits` writes the rows.
"""

import hashlib
import hmac
import random
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.taxonomy import normalise_label_name

CHOICES_PER_ITEM = 3


@dataclass(frozen=True)
class PlannedItem:
    """One screen of a HIT: exactly one of dialogue_id / quiz_id is set."""

    dialogue_id: int | None = None
    quiz_id: int | None = None


def bundle_count(dialogue_count: int, dialogues_per_hit: int) -> int:
    if dialogues_per_hit < 1:
        raise ValueError("dialogues_per_hit must be at least 1")
    return -(-dialogue_count // dialogues_per_hit)


def plan_bundles(
    dialogue_ids: Sequence[int],
    quiz_sets: Sequence[Sequence[int]],
    *,
    dialogues_per_hit: int,
    rng: random.Random,
) -> list[list[PlannedItem]]:
    """Cut the ranked dialogues into HITs, add one set of quiz ids to each (quiz_sets: one per
    HIT, see bundle_count) and shuffle every HIT so a quiz screen sits anywhere. The last HIT may
    hold fewer dialogues.
    """
    if len(quiz_sets) != bundle_count(len(dialogue_ids), dialogues_per_hit):
        raise ValueError(f"{len(quiz_sets)} quiz sets for {bundle_count(len(dialogue_ids), dialogues_per_hit)} HITs")
    bundles = []
    for index, start in enumerate(range(0, len(dialogue_ids), dialogues_per_hit)):
        items = [PlannedItem(dialogue_id=d) for d in dialogue_ids[start : start + dialogues_per_hit]]
        items += [PlannedItem(quiz_id=q) for q in quiz_sets[index]]
        rng.shuffle(items)
        bundles.append(items)
    return bundles


def quiz_sets_per_seat(quiz_set: Sequence, seats: int) -> list[list]:
    """One HIT's drawn quiz items cut into `seats` equal sets, one per seat slot (1, 2, ...): no
    two seats share an item. len(quiz_set) must be a multiple of `seats`."""
    if seats < 1 or len(quiz_set) % seats:
        raise ValueError(f"{len(quiz_set)} quiz items do not split into {seats} seats")
    size = len(quiz_set) // seats
    return [list(quiz_set[index * size : (index + 1) * size]) for index in range(seats)]


def choice_order(choices: Sequence[str], key: bytes) -> list[str]:
    """The choices in the order one assignment sees them: a permutation keyed by a secret
    (an HMAC of the assignment and item), stable across reloads, unrelated to rank or answer."""
    return sorted(choices, key=lambda name: hmac.new(key, name.casefold().encode(), hashlib.sha256).digest())


def top_choices(ranked_names: Sequence[str], fallback: Sequence[str]) -> list[str]:
    """The three labels a screen offers: the best-ranked names first, topped up from the fallback,
    without repeats (compared by normalise_label_name). Raises ValueError when fewer than three remain.
    """
    chosen: list[str] = []
    for name in [*ranked_names, *fallback]:
        key = normalise_label_name(name or "")
        if key and key not in {normalise_label_name(c) for c in chosen}:
            chosen.append(name)
        if len(chosen) == CHOICES_PER_ITEM:
            return chosen
    raise ValueError(f"only {len(chosen)} distinct labels to offer ({chosen}); three are needed")
