"""How a HIT is put together, as plain data: which dialogues and quiz questions go in which HIT,
in which order, and which three labels each screen offers. No Django import.

`labeling.services.build_hits` feeds it ids; `labeling.hits.write_hits` writes the rows.
"""

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


def plan_bundles(
    dialogue_ids: Sequence[int],
    quiz_ids: Sequence[int],
    *,
    dialogues_per_hit: int,
    quiz_per_hit: int,
    rng: random.Random,
) -> list[list[PlannedItem]]:
    """Cut the ranked dialogues into HITs, add `quiz_per_hit` distinct quiz questions to each and
    shuffle every HIT so a quiz screen sits anywhere. The last HIT may hold fewer dialogues.

    Raises ValueError when the quiz bank is too small to give every HIT its quiz questions.
    """
    if dialogues_per_hit < 1:
        raise ValueError("dialogues_per_hit must be at least 1")
    if quiz_per_hit > len(quiz_ids):
        raise ValueError(f"each HIT needs {quiz_per_hit} quiz questions but only {len(quiz_ids)} active ones exist")
    bundles = []
    for start in range(0, len(dialogue_ids), dialogues_per_hit):
        items = [PlannedItem(dialogue_id=d) for d in dialogue_ids[start : start + dialogues_per_hit]]
        items += [PlannedItem(quiz_id=q) for q in rng.sample(list(quiz_ids), quiz_per_hit)]
        rng.shuffle(items)
        bundles.append(items)
    return bundles


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
