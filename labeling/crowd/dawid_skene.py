"""Dawid-Skene (1979): a second opinion to the majority vote that learns each worker's confusion.

Expectation-maximisation over (item, worker, answer) triples, started from the majority vote's
soft counts. A worker whose answers carry no information about the true label (always the same
answer, or random) ends up with a flat confusion row and barely moves the posterior; a reliable
worker's answers dominate. Pure numpy, no Django; our own implementation so the result and its
per-worker confusion stay plain dicts the dashboard can show.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

_SMOOTHING = 0.01  # keeps unseen (true, answered) pairs from becoming impossible


@dataclass(frozen=True)
class DawidSkeneResult:
    labels: dict[object, str]  # item -> most probable true label
    confidence: dict[object, float]  # item -> its posterior probability
    priors: dict[str, float]  # label -> estimated share of items
    confusion: dict[object, dict[str, dict[str, float]]]  # worker -> true label -> answer -> P(answer | true)
    worker_accuracy: dict[object, float]  # worker -> P(answer == true label), weighted by the priors
    iterations: int
    # item -> label -> posterior probability, labels under POSTERIOR_FLOOR left out (the soft label)
    posterior: dict[object, dict[str, float]] = field(default_factory=dict)


POSTERIOR_FLOOR = 0.001


def dawid_skene(
    triples: Iterable[tuple[object, object, str]], *, max_iterations: int = 30, tolerance: float = 1e-4
) -> DawidSkeneResult:
    triples = list(triples)
    if not triples:
        return DawidSkeneResult({}, {}, {}, {}, {}, 0, {})
    items = sorted({t[0] for t in triples}, key=repr)
    workers = sorted({t[1] for t in triples}, key=repr)
    labels = sorted({t[2] for t in triples})
    item_index = {item: i for i, item in enumerate(items)}
    worker_index = {worker: w for w, worker in enumerate(workers)}
    label_index = {label: k for k, label in enumerate(labels)}
    # Sparse form: one entry per answer, so the cost grows with the answers, not items x labels^2.
    answers = _Answers(
        np.array([item_index[t[0]] for t in triples]),
        np.array([worker_index[t[1]] for t in triples]),
        np.array([label_index[t[2]] for t in triples]),
        len(items),
        len(workers),
        len(labels),
    )
    posterior = np.zeros((len(items), len(labels)))
    np.add.at(posterior, (answers.item, answers.label), 1.0)
    posterior /= posterior.sum(axis=1, keepdims=True)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - kept for the result
        priors, confusion = _m_step(posterior, answers)
        updated = _e_step(priors, confusion, answers)
        converged = np.abs(updated - posterior).max() < tolerance
        posterior = updated
        if converged:
            break
    priors, confusion = _m_step(posterior, answers)
    return _result(items, workers, labels, posterior, priors, confusion, iterations)


class _Answers:
    """Answers as parallel index arrays, with the sort orders the two EM steps group by."""

    def __init__(self, item, worker, label, n_items, n_workers, n_labels):
        self.item, self.worker, self.label = item, worker, label
        self.n_workers, self.n_labels = n_workers, n_labels
        self.by_item = np.argsort(item, kind="stable")
        self.item_starts = np.flatnonzero(np.r_[True, np.diff(item[self.by_item]) != 0])
        pair = worker * n_labels + label
        self.by_pair = np.argsort(pair, kind="stable")
        sorted_pairs = pair[self.by_pair]
        self.pair_starts = np.flatnonzero(np.r_[True, np.diff(sorted_pairs) != 0])
        self.pairs = sorted_pairs[self.pair_starts]


def _m_step(posterior: np.ndarray, answers: _Answers) -> tuple[np.ndarray, np.ndarray]:
    priors = posterior.mean(axis=0)
    # confusion[w, true, answered]: the posterior mass of the items on which w answered `answered`
    summed = np.add.reduceat(posterior[answers.item[answers.by_pair]], answers.pair_starts, axis=0)
    confusion = np.full((answers.n_workers, answers.n_labels, answers.n_labels), _SMOOTHING)
    workers, answered = np.divmod(answers.pairs, answers.n_labels)
    confusion[workers, :, answered] += summed
    confusion /= confusion.sum(axis=2, keepdims=True)
    return priors, confusion


def _e_step(priors: np.ndarray, confusion: np.ndarray, answers: _Answers) -> np.ndarray:
    # log P(true = t | answers of item i) up to a constant: the prior plus each answer's log likelihood
    per_answer = np.log(confusion)[answers.worker, :, answers.label]
    log_likelihood = np.add.reduceat(per_answer[answers.by_item], answers.item_starts, axis=0)
    log_likelihood += np.log(np.maximum(priors, 1e-12))
    log_likelihood -= log_likelihood.max(axis=1, keepdims=True)
    posterior = np.exp(log_likelihood)
    return posterior / posterior.sum(axis=1, keepdims=True)


def _result(items, workers, labels, posterior, priors, confusion, iterations) -> DawidSkeneResult:
    best = posterior.argmax(axis=1)
    return DawidSkeneResult(
        labels={item: labels[best[i]] for i, item in enumerate(items)},
        confidence={item: float(posterior[i, best[i]]) for i, item in enumerate(items)},
        priors={label: float(priors[k]) for k, label in enumerate(labels)},
        confusion={
            worker: {
                true: {answered: float(confusion[w, t, a]) for a, answered in enumerate(labels)}
                for t, true in enumerate(labels)
            }
            for w, worker in enumerate(workers)
        },
        worker_accuracy={worker: float((priors * np.diag(confusion[w])).sum()) for w, worker in enumerate(workers)},
        iterations=iterations,
        posterior={item: _soft_label(posterior[i], labels) for i, item in enumerate(items)},
    )


def _soft_label(row: np.ndarray, labels: list[str]) -> dict[str, float]:
    kept = {labels[k]: round(float(p), 4) for k, p in enumerate(row) if p >= POSTERIOR_FLOOR}
    return dict(sorted(kept.items(), key=lambda pair: (-pair[1], pair[0])))
