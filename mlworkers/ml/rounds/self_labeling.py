"""The self-labeling rounds of the papers' Table 5, over plain data. Pure: no Django.

    round 1  base           train on the gold training labels
    round 2  +SBERT         + unlabeled dialogues similar (>= 0.92) to a gold dialogue
    round 3  +self-labeled  + the best `self_per_label` unlabeled dialogues per label that the
                            round-2 model labels with confidence >= 0.9
    round 4  +SBERT(self)   + unlabeled dialogues similar (>= 0.9) to a self-labeled one

Every learner (the dialogue classifier, fastText, ...) trains on the same training set in every
round and is scored on the same held-out test items; the first learner drives self-labeling.
Training, prediction and similarity search are injected, so the orchestration is tested with a tiny
model in seconds and the Django side passes the real ones.

The unlabeled dialogues are a `Pool`: only their keys are held (8 bytes each); their texts are
read `config.chunk_size` at a time for similarity search and self-labeling, and kept only for the
ones that join the training set. Memory therefore grows with the labeled data, not the corpus.
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from annotation.papers import (
    SELF_LABEL_MIN_CONFIDENCE,
    SELF_LABELS_PER_LABEL,
)
from mlworkers.ml.expansion.similarity import (
    NO_MATCH,
    PAPER_SBERT_THRESHOLD,
    PAPER_SECOND_SBERT_THRESHOLD,
    chunked_matches,
)
from mlworkers.ml.metrics import classification_report

SBERT, SELF = "sbert", "self"


@dataclass(frozen=True)
class Item:
    """A dialogue whose last turn carries (or will get) the label; `key` identifies that turn."""

    key: int
    turns: tuple[str, ...]
    label: str | None = None


@dataclass(frozen=True)
class NewLabel:
    key: int
    label: str
    source: str  # SBERT or SELF
    round: int
    confidence: float | None = None
    source_key: int | None = None  # the labeled item an SBERT label was copied from
    similarity: float | None = None


@dataclass
class Learner:
    name: str
    train: Callable[[list[Item]], Any]
    predict_proba: Callable[[Any, list[Item]], np.ndarray]


# sources (labeled), candidates, threshold -> [(candidate key, source key, similarity)]
ExpandFunction = Callable[[list[Item], list[Item], float], list[tuple[int, int, float]]]
Progress = Callable[[int, int, str], None]


class Pool(Protocol):
    """The unlabeled dialogues: their keys at once, their texts only on request."""

    def all_keys(self) -> Sequence[int]: ...

    def read(self, keys: Sequence[int]) -> list[Item]:
        """The items of `keys`, in that order, with their turns."""
        ...


class InMemoryPool:
    """A Pool over items already in memory (tests, small corpora)."""

    def __init__(self, items: Iterable[Item]):
        self._items = {item.key: item for item in items}

    def all_keys(self) -> list[int]:
        return list(self._items)

    def read(self, keys: Sequence[int]) -> list[Item]:
        return [self._items[key] for key in keys]


@dataclass
class RoundsConfig:
    label_names: list[str]
    first_threshold: float = PAPER_SBERT_THRESHOLD
    second_threshold: float = PAPER_SECOND_SBERT_THRESHOLD
    self_per_label: int = SELF_LABELS_PER_LABEL
    self_min_confidence: float = SELF_LABEL_MIN_CONFIDENCE
    chunk_size: int = 2000  # unlabeled dialogues read, embedded or scored at a time
    # round number -> extra columns for the SBERT rounds' rows (where the threshold came from, the
    # precision its calibration predicts): the caller knows them, the rounds only report them
    expansion_notes: dict[int, dict[str, Any]] = field(default_factory=dict)


@dataclass
class RoundResult:
    round: int
    name: str
    training_size: int
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)  # learner -> classification report
    expansion: dict[str, Any] = field(default_factory=dict)  # SBERT rounds: expanded, threshold, notes

    def row(self) -> dict[str, Any]:
        """The Table 5 line: round, training size and, per learner, macro-F1 and accuracy."""
        out: dict[str, Any] = {"round": self.round, "name": self.name, "training_size": self.training_size}
        for learner, report in self.scores.items():
            out[f"{learner}_macro_f1"] = report["macro_f1"]
            out[f"{learner}_accuracy"] = report["accuracy"]
        return {**out, **self.expansion}


@dataclass
class RoundsOutcome:
    rounds: list[RoundResult]
    new_labels: list[NewLabel]
    models: dict[str, Any]  # learner -> the model of the last round

    def table(self) -> list[dict[str, Any]]:
        return [result.row() for result in self.rounds]


def run_rounds(
    gold_train: Sequence[Item],
    test: Sequence[Item],
    unlabeled: Pool | Sequence[Item],
    learners: Sequence[Learner],
    expand: ExpandFunction,
    config: RoundsConfig,
    progress: Progress | None = None,
) -> RoundsOutcome:
    if not learners:
        raise ValueError("at least one learner is needed")
    say = progress or (lambda done, total, message: None)
    pool = InMemoryPool(unlabeled) if isinstance(unlabeled, Sequence) else unlabeled
    remaining = np.array(sorted(int(key) for key in pool.all_keys()), dtype=np.int64)
    training, new_labels, results = list(gold_train), [], []

    def grow(labels: list[NewLabel]) -> None:
        nonlocal training, new_labels, remaining
        training, new_labels = training + _as_items(labels, pool, config.chunk_size), new_labels + labels
        remaining = remaining[~np.isin(remaining, [n.key for n in labels])]

    say(0, 4, "round 1: base")
    models = _train_and_score(1, "base", training, test, learners, config, results)

    say(1, 4, "round 2: + SBERT-similar to gold")
    expanded = _expand(training, remaining, pool, expand, config, config.first_threshold, round_number=2)
    grow(expanded)
    models = _train_and_score(2, "+SBERT", training, test, learners, config, results)
    results[-1].expansion = _expansion_columns(config, 2, config.first_threshold, expanded)

    say(2, 4, "round 3: + self-labeled")
    primary = learners[0]
    selector = SelfLabelSelector(config, round_number=3)
    for candidates in _chunks_of_items(remaining, pool, config.chunk_size):
        selector.add(candidates, primary.predict_proba(models[primary.name], candidates))
    self_labeled = selector.chosen()
    grow(self_labeled)
    models = _train_and_score(3, "+self-labeled", training, test, learners, config, results)
    results[-1].expansion = {"self_labeled": len(self_labeled), "highest_confidence": selector.highest}

    say(3, 4, "round 4: + SBERT-similar to self-labeled")
    sources = [Item(n.key, (), n.label) for n in self_labeled]
    expanded = _expand(sources, remaining, pool, expand, config, config.second_threshold, round_number=4)
    grow(expanded)
    models = _train_and_score(4, "+SBERT(self)", training, test, learners, config, results)
    results[-1].expansion = _expansion_columns(config, 4, config.second_threshold, expanded)
    say(4, 4, "rounds done")
    return RoundsOutcome(rounds=results, new_labels=new_labels, models=models)


def _expansion_columns(config: RoundsConfig, number: int, threshold: float, expanded: list) -> dict[str, Any]:
    return {"expanded": len(expanded), "threshold": threshold, **config.expansion_notes.get(number, {})}


def _chunks_of_items(keys: np.ndarray, pool: Pool, size: int, *, with_turns: bool = True) -> Iterator[list[Item]]:
    """The pool's items for `keys`, `size` at a time: only one chunk's texts are ever in memory."""
    for start in range(0, len(keys), size):
        chunk = [int(key) for key in keys[start : start + size]]
        yield pool.read(chunk) if with_turns else [Item(key, ()) for key in chunk]


def _train_and_score(number, name, training, test, learners, config, results) -> dict[str, Any]:
    result = RoundResult(round=number, name=name, training_size=len(training))
    models = {}
    truth = [item.label for item in test]
    for learner in learners:
        model = learner.train(list(training))
        predicted = learner.predict_proba(model, list(test)).argmax(axis=1) if test else np.zeros(0, dtype=int)
        result.scores[learner.name] = classification_report(truth, predicted, config.label_names)
        models[learner.name] = model
    results.append(result)
    return models


def _expand(sources, remaining, pool, expand, config, threshold, *, round_number) -> list[NewLabel]:
    """Candidates are searched a chunk at a time: each one's best source does not depend on the
    other candidates, so chunking changes nothing but the memory held."""
    if not sources or not len(remaining):
        return []
    label_of = {item.key: item.label for item in sources}
    with_turns = getattr(expand, "needs_turns", True)
    found = []
    for candidates in _chunks_of_items(remaining, pool, config.chunk_size, with_turns=with_turns):
        for key, source, similarity in expand(list(sources), candidates, threshold):
            found.append(
                NewLabel(
                    key=key,
                    label=label_of[source],
                    source=SBERT,
                    round=round_number,
                    confidence=similarity,
                    source_key=source,
                    similarity=similarity,
                )
            )
    return found


def _as_items(labels: Sequence[NewLabel], pool: Pool, size: int) -> list[Item]:
    items = []
    for start in range(0, len(labels), size):
        chunk = labels[start : start + size]
        items += [
            Item(n.key, item.turns, n.label) for n, item in zip(chunk, pool.read([n.key for n in chunk]), strict=True)
        ]
    return items


class SelfLabelSelector:
    """Self-label candidates fed chunk by chunk; per label only the `self_per_label` best are kept
    (a bounded heap), so memory does not grow with the number of candidates."""

    def __init__(self, config: RoundsConfig, *, round_number: int):
        self.config, self.round_number = config, round_number
        self._best: dict[int, list[tuple[float, int]]] = defaultdict(list)  # label -> heap of (score, -key)
        self.highest: float | None = None  # the most confident prediction seen, chosen or not

    def add(self, candidates: Sequence[Item], probabilities: np.ndarray | None) -> None:
        if probabilities is None or not len(candidates):
            return
        best, confidence = probabilities.argmax(axis=1), probabilities.max(axis=1)
        self.highest = max(float(confidence.max()), self.highest or 0.0)
        for item, label_index, score in zip(candidates, best, confidence, strict=True):
            if score < self.config.self_min_confidence:
                continue
            heap, entry = self._best[int(label_index)], (float(score), -item.key)
            if len(heap) < self.config.self_per_label:
                heapq.heappush(heap, entry)
            elif entry > heap[0]:  # higher score, or the same score and a lower key
                heapq.heapreplace(heap, entry)

    def chosen(self) -> list[NewLabel]:
        names = self.config.label_names
        return sorted(
            (
                NewLabel(-negative_key, names[label_index], SELF, self.round_number, score)
                for label_index, heap in self._best.items()
                for score, negative_key in heap
            ),
            key=lambda n: n.key,
        )


def why_no_gain(table: Sequence[dict[str, Any]], test_size: int, learner: str = "dialogue") -> list[str]:
    """What a reader of the rounds table needs when the rounds show no gain: which rounds added no
    labels and why, and whether the test set is large enough to show a gain at all. Empty when the
    last round beats the base by more than one test dialogue's worth (pure)."""
    first, last = table[0].get(f"{learner}_macro_f1"), table[-1].get(f"{learner}_macro_f1")
    one_dialogue = 1 / test_size if test_size else 1.0
    if first is None or last is None or last - first > one_dialogue:
        return []
    notes = []
    for row in table[1:]:
        if row.get("expanded") == 0:
            notes.append(
                f"Round {row['round']} ({row['name']}) added no labels: no unlabeled dialogue was at least "
                f"{row.get('threshold')} similar to a labeled one."
            )
        if row.get("self_labeled") == 0:
            highest = row.get("highest_confidence")
            seen = f"its most confident prediction was {highest:.2f}" if highest is not None else "it saw no candidate"
            notes.append(
                f"Round {row['round']} ({row['name']}) added no labels: a self label needs the previous "
                f"round's model at or above {SELF_LABEL_MIN_CONFIDENCE} confidence, and {seen}."
            )
    notes.append(
        f"The {learner} model's macro-F1 moved {last - first:+.3f} from the base round to the last, within what "
        f"one of the {test_size} test dialogues moves (about {one_dialogue:.3f}): a test set this small cannot "
        "show the rounds' gain."
    )
    return notes


def select_self_labels(
    candidates: Sequence[Item], probabilities: np.ndarray | None, config: RoundsConfig, *, round_number: int
) -> list[NewLabel]:
    """Per label, the `self_per_label` most confident candidates predicted as that label with
    confidence >= `self_min_confidence` (ties: lower key first)."""
    selector = SelfLabelSelector(config, round_number=round_number)
    selector.add(candidates, probabilities)
    return selector.chosen()


def vector_expander(vectors_for: Callable[[list[int]], np.ndarray], search=chunked_matches) -> ExpandFunction:
    """An ExpandFunction over L2-normalised dialogue vectors looked up by item key: every candidate
    at or above the threshold takes the label of its most similar source. It reads keys only
    (`needs_turns` is False), and the sources' vectors are kept between calls on the same sources,
    so a pool searched chunk by chunk embeds its sources once."""
    cached: dict[str, Any] = {"keys": None, "vectors": None}

    def expand(sources: list[Item], candidates: list[Item], threshold: float) -> list[tuple[int, int, float]]:
        source_keys, candidate_keys = [s.key for s in sources], [c.key for c in candidates]
        if cached["keys"] != source_keys:
            cached.update(keys=source_keys, vectors=vectors_for(source_keys))
        matches = search(vectors_for(candidate_keys), cached["vectors"], threshold)
        return [
            (candidate_keys[row], source_keys[int(matches.gold_index[row])], float(matches.similarity[row]))
            for row in np.flatnonzero(matches.gold_index != NO_MATCH)
        ]

    expand.needs_turns = False  # type: ignore[attr-defined]
    return expand


def stratified_split(
    labeled: Iterable[tuple[int, str]], *, test_fraction: float = 0.2, validation_fraction: float = 0.1, seed: int = 13
) -> dict[int, str]:
    """Assign "test", "validation" or "train" to every (key, label): within each label a seeded
    shuffle sends round(n * test_fraction) to test and round(rest * validation_fraction) to
    validation, so every label is held out in the same proportion."""
    by_label: dict[str, list[int]] = defaultdict(list)
    for key, label in labeled:
        by_label[label].append(key)
    rng = random.Random(seed)
    split: dict[int, str] = {}
    for label in sorted(by_label):
        keys = sorted(by_label[label])
        rng.shuffle(keys)
        n_test = int(round(len(keys) * test_fraction))
        n_validation = int(round((len(keys) - n_test) * validation_fraction))
        for position, key in enumerate(keys):
            split[key] = "test" if position < n_test else "validation" if position < n_test + n_validation else "train"
    return split
