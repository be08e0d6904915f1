"""Dawid-Skene (1979): a second opinion to the majority vote that learns each worker's confusion.

Expectation-maximisation over (item, worker, answer) triples, started from the majority vote's
soft counts. A worker whose answers carry no information about the true label (always the same
answer, or random) ends up with a flat confusion row and barely moves the posterior; a reliable
worker's answers dominate. Pure numpy, no Django; our own implementation so the result and its
per-worker confusion stay plain dicts the dashboard can show.
"""

from collections.abc import Iterable
from dataclasses import dataclass

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


def dawid_skene(
    triples: Iterable[tuple[object, object, str]], *, max_iterations: int = 50, tolerance: float = 1e-6
) -> DawidSkeneResult:
    triples = list(triples)
    if not triples:
        return DawidSkeneResult({}, {}, {}, {}, {}, 0)
    items = sorted({t[0] for t in triples}, key=repr)
    workers = sorted({t[1] for t in triples}, key=repr)
    labels = sorted({t[2] for t in triples})
    item_index = {item: i for i, item in enumerate(items)}
    worker_index = {worker: w for w, worker in enumerate(workers)}
    label_index = {label: k for k, label in enumerate(labels)}
    # counts[i, w, k]: how many times worker w answered k on item i (0 or 1 in practice)
    counts = np.zeros((len(items), len(workers), len(labels)))
    for item, worker, answer in triples:
        counts[item_index[item], worker_index[worker], label_index[answer]] += 1

    posterior = counts.sum(axis=1)
    posterior /= posterior.sum(axis=1, keepdims=True)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - kept for the result
        priors, confusion = _m_step(posterior, counts)
        updated = _e_step(priors, confusion, counts)
        converged = np.abs(updated - posterior).max() < tolerance
        posterior = updated
        if converged:
            break
    priors, confusion = _m_step(posterior, counts)
    return _result(items, workers, labels, posterior, priors, confusion, iterations)


def _m_step(posterior: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    priors = posterior.mean(axis=0)
    # confusion[w, true, answered]
    confusion = np.einsum("it,iwa->wta", posterior, counts) + _SMOOTHING
    confusion /= confusion.sum(axis=2, keepdims=True)
    return priors, confusion


def _e_step(priors: np.ndarray, confusion: np.ndarray, counts: np.ndarray) -> np.ndarray:
    # log P(true = t | answers of item i) up to a constant
    log_likelihood = np.einsum("iwa,wta->it", counts, np.log(confusion)) + np.log(np.maximum(priors, 1e-12))
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
    )
