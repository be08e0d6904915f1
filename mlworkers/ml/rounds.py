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
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlworkers.ml.metrics import classification_report
from mlworkers.ml.similarity import NO_MATCH, chunked_matches

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


@dataclass
class RoundsConfig:
    label_names: list[str]
    first_threshold: float = 0.92
    second_threshold: float = 0.9
    self_per_label: int = 100
    self_min_confidence: float = 0.9


@dataclass
class RoundResult:
    round: int
    name: str
    training_size: int
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)  # learner -> classification report

    def row(self) -> dict[str, Any]:
        """The Table 5 line: round, training size and, per learner, macro-F1 and accuracy."""
        out: dict[str, Any] = {"round": self.round, "name": self.name, "training_size": self.training_size}
        for learner, report in self.scores.items():
            out[f"{learner}_macro_f1"] = report["macro_f1"]
            out[f"{learner}_accuracy"] = report["accuracy"]
        return out


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
    unlabeled: Sequence[Item],
    learners: Sequence[Learner],
    expand: ExpandFunction,
    config: RoundsConfig,
    progress: Progress | None = None,
) -> RoundsOutcome:
    if not learners:
        raise ValueError("at least one learner is needed")
    say = progress or (lambda done, total, message: None)
    training, pool = list(gold_train), {item.key: item for item in unlabeled}
    results, new_labels = [], []

    say(0, 4, "round 1: base")
    models = _train_and_score(1, "base", training, test, learners, config, results)

    say(1, 4, "round 2: + SBERT-similar to gold")
    sbert = _expand(training, pool, expand, config.first_threshold, round_number=2)
    training, new_labels = training + _as_items(sbert, pool), new_labels + sbert
    _take(pool, sbert)
    models = _train_and_score(2, "+SBERT", training, test, learners, config, results)

    say(2, 4, "round 3: + self-labeled")
    primary = learners[0]
    candidates = list(pool.values())
    probabilities = primary.predict_proba(models[primary.name], candidates) if candidates else None
    self_labeled = select_self_labels(candidates, probabilities, config, round_number=3)
    training, new_labels = training + _as_items(self_labeled, pool), new_labels + self_labeled
    _take(pool, self_labeled)
    models = _train_and_score(3, "+self-labeled", training, test, learners, config, results)

    say(3, 4, "round 4: + SBERT-similar to self-labeled")
    sources = [Item(n.key, (), n.label) for n in self_labeled]
    sbert_self = _expand(sources, pool, expand, config.second_threshold, round_number=4)
    training, new_labels = training + _as_items(sbert_self, pool), new_labels + sbert_self
    _take(pool, sbert_self)
    models = _train_and_score(4, "+SBERT(self)", training, test, learners, config, results)
    say(4, 4, "rounds done")
    return RoundsOutcome(rounds=results, new_labels=new_labels, models=models)


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


def _expand(sources, pool, expand, threshold, *, round_number) -> list[NewLabel]:
    if not sources or not pool:
        return []
    label_of = {item.key: item.label for item in sources}
    matches = expand(list(sources), list(pool.values()), threshold)
    return [
        NewLabel(
            key=key,
            label=label_of[source],
            source=SBERT,
            round=round_number,
            confidence=similarity,
            source_key=source,
            similarity=similarity,
        )
        for key, source, similarity in matches
    ]


def _as_items(labels: Iterable[NewLabel], pool: dict[int, Item]) -> list[Item]:
    return [Item(n.key, pool[n.key].turns, n.label) for n in labels]


def _take(pool: dict[int, Item], labels: Iterable[NewLabel]) -> None:
    for new in labels:
        pool.pop(new.key, None)


def select_self_labels(
    candidates: Sequence[Item], probabilities: np.ndarray | None, config: RoundsConfig, *, round_number: int
) -> list[NewLabel]:
    """Per label, the `self_per_label` most confident candidates predicted as that label with
    confidence >= `self_min_confidence` (ties: lower key first)."""
    if probabilities is None or not len(candidates):
        return []
    best, confidence = probabilities.argmax(axis=1), probabilities.max(axis=1)
    by_label: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for row, (label_index, score) in enumerate(zip(best, confidence, strict=True)):
        if score >= config.self_min_confidence:
            by_label[int(label_index)].append((float(score), row))
    chosen = []
    for label_index, scored in by_label.items():
        scored.sort(key=lambda pair: (-pair[0], candidates[pair[1]].key))
        for score, row in scored[: config.self_per_label]:
            chosen.append(NewLabel(candidates[row].key, config.label_names[label_index], SELF, round_number, score))
    return sorted(chosen, key=lambda n: n.key)


def vector_expander(vectors_for: Callable[[list[int]], np.ndarray], search=chunked_matches) -> ExpandFunction:
    """An ExpandFunction over L2-normalised dialogue vectors looked up by item key: every candidate
    at or above the threshold takes the label of its most similar source."""

    def expand(sources: list[Item], candidates: list[Item], threshold: float) -> list[tuple[int, int, float]]:
        source_keys, candidate_keys = [s.key for s in sources], [c.key for c in candidates]
        matches = search(vectors_for(candidate_keys), vectors_for(source_keys), threshold)
        return [
            (candidate_keys[row], source_keys[int(matches.gold_index[row])], float(matches.similarity[row]))
            for row in np.flatnonzero(matches.gold_index != NO_MATCH)
        ]

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
