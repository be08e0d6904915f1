"""How well consecutive turns hang together, for BotsTalk's benchmark. Pure: no Django import.

- `mean_consecutive_similarity`: the mean cosine similarity of the bi-encoder's vectors of each
  turn and the next, over every consecutive pair of every dialogue;
- `contradiction_rate`: the share of consecutive pairs the NLI finds contradicting (premise the
  turn, hypothesis the next, P(contradiction) at least the threshold);
- `random_turn_pairs`: the baseline, two-turn dialogues of turns drawn from two different dialogues.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from mlworkers.ml.botstalk.agents import NLI, Encoder
from mlworkers.ml.expansion.embeddings import normalise_rows


def consecutive_pairs(dialogues: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    return [(turns[i], turns[i + 1]) for turns in dialogues for i in range(len(turns) - 1)]


def mean_consecutive_similarity(dialogues: Sequence[Sequence[str]], encoder: Encoder) -> float:
    pairs = consecutive_pairs(dialogues)
    if not pairs:
        raise ValueError("no dialogue has two turns")
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    vectors = normalise_rows(np.asarray(encoder.encode(texts), dtype=np.float32))
    row = {text: i for i, text in enumerate(texts)}
    first = vectors[[row[a] for a, _b in pairs]]
    second = vectors[[row[b] for _a, b in pairs]]
    return float(np.mean(np.sum(first * second, axis=1)))


def contradiction_rate(dialogues: Sequence[Sequence[str]], nli: NLI, threshold: float = 0.5) -> float:
    pairs = consecutive_pairs(dialogues)
    if not pairs:
        raise ValueError("no dialogue has two turns")
    probabilities = np.asarray(nli.contradiction_probabilities([a for a, _b in pairs], [b for _a, b in pairs]))
    return float(np.mean(probabilities >= threshold))


def random_turn_pairs(dialogues: Sequence[Sequence[str]], count: int, seed: int = 0) -> list[list[str]]:
    """`count` two-turn dialogues, each a turn of one dialogue followed by a turn of another."""
    usable = [list(turns) for turns in dialogues if turns]
    if len(usable) < 2:
        raise ValueError("random pairs need turns from two dialogues or more")
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        first, second = rng.sample(range(len(usable)), 2)
        pairs.append([rng.choice(usable[first]), rng.choice(usable[second])])
    return pairs
