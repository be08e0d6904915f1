"""Threshold search: for every unlabeled dialogue, the most similar gold dialogue at or above a
cosine threshold. Pure: numpy (and faiss), no Django.

Vectors must be L2-normalised, so the inner product is the cosine similarity. Three exact
implementations give the same answer: `brute_force_matches` (one matrix, for tests),
`chunked_matches` (the reference: blocks of matrix products, memory bounded by the block sizes,
works on a memmap of millions of rows) and `faiss_matches` (FAISS inner-product range search over
the same blocks). Ties between equally similar gold dialogues go to the lower gold index.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from annotation.papers import SBERT_EXPANSION_THRESHOLD, SBERT_SECOND_THRESHOLD

NO_MATCH = -1
# The paper's thresholds, chosen for the paper's own SBERT model: another encoder gets its own
# from its calibration (mlworkers.ml.expansion.calibration); the paper-replication recipe uses these
# (the rounds: mlworkers.ml.rounds.self_labeling).
PAPER_SBERT_THRESHOLD = SBERT_EXPANSION_THRESHOLD  # round 2: unlabeled similar to gold (annotation.papers)
PAPER_SECOND_SBERT_THRESHOLD = SBERT_SECOND_THRESHOLD  # round 4: unlabeled similar to the self-labeled
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Matches:
    """Per unlabeled row: the index of its best gold row (NO_MATCH below the threshold) and the similarity."""

    gold_index: np.ndarray  # int64
    similarity: np.ndarray  # float32, NaN where there is no match

    def matched_rows(self) -> np.ndarray:
        return np.flatnonzero(self.gold_index != NO_MATCH)


def _empty(count: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(count, NO_MATCH, dtype=np.int64), np.full(count, np.nan, dtype=np.float32)


def brute_force_matches(unlabeled: np.ndarray, gold: np.ndarray, threshold: float) -> Matches:
    gold_index, similarity = _empty(len(unlabeled))
    if len(gold) and len(unlabeled):
        scores = np.asarray(unlabeled, dtype=np.float32) @ np.asarray(gold, dtype=np.float32).T
        best = scores.argmax(axis=1)
        best_scores = scores[np.arange(len(unlabeled)), best]
        hit = best_scores >= threshold
        gold_index[hit], similarity[hit] = best[hit], best_scores[hit]
    return Matches(gold_index, similarity)


def chunked_matches(
    unlabeled: np.ndarray,
    gold: np.ndarray,
    threshold: float,
    *,
    chunk_size: int = 4096,
    gold_chunk_size: int = 16384,
    progress: Progress | None = None,
) -> Matches:
    """Blocks of `chunk_size` unlabeled rows times `gold_chunk_size` gold rows: peak memory is one
    float32 block of chunk_size x gold_chunk_size, whatever the corpus size."""
    gold_index, similarity = _empty(len(unlabeled))
    gold = np.asarray(gold, dtype=np.float32)
    for start in range(0, len(unlabeled), chunk_size):
        block = np.asarray(unlabeled[start : start + chunk_size], dtype=np.float32)
        best_index = np.full(len(block), NO_MATCH, dtype=np.int64)
        best_score = np.full(len(block), -np.inf, dtype=np.float32)
        for gold_start in range(0, len(gold), gold_chunk_size):
            scores = block @ gold[gold_start : gold_start + gold_chunk_size].T
            local = scores.argmax(axis=1)
            local_score = scores[np.arange(len(block)), local]
            better = local_score > best_score  # strictly: an earlier gold block keeps a tie
            best_index[better] = local[better] + gold_start
            best_score[better] = local_score[better]
        hit = best_score >= threshold
        rows = np.arange(start, start + len(block))
        gold_index[rows[hit]], similarity[rows[hit]] = best_index[hit], best_score[hit]
        if progress:
            progress(start + len(block), len(unlabeled))
    return Matches(gold_index, similarity)


def faiss_matches(
    unlabeled: np.ndarray,
    gold: np.ndarray,
    threshold: float,
    *,
    chunk_size: int = 65536,
    progress: Progress | None = None,
) -> Matches:
    """FAISS exact inner-product range search, the gold set as the index and the unlabeled rows
    as queries in chunks; keeps the best hit per query."""
    import faiss

    gold_index, similarity = _empty(len(unlabeled))
    if not len(gold):
        return Matches(gold_index, similarity)
    index = faiss.IndexFlatIP(gold.shape[1])
    index.add(np.ascontiguousarray(gold, dtype=np.float32))
    for start in range(0, len(unlabeled), chunk_size):
        block = np.ascontiguousarray(unlabeled[start : start + chunk_size], dtype=np.float32)
        # FAISS keeps inner products strictly above the radius: step one float below the threshold
        # and filter with >=, so a similarity equal to the threshold matches as in the other searches.
        radius = float(np.nextafter(np.float32(threshold), np.float32(-np.inf)))
        lims, scores, ids = index.range_search(block, radius)
        _keep_best(start, lims, scores, ids, threshold, gold_index, similarity)
        if progress:
            progress(start + len(block), len(unlabeled))
    return Matches(gold_index, similarity)


def _keep_best(start, lims, scores, ids, threshold, gold_index, similarity) -> None:
    counts = np.diff(lims.astype(np.int64))
    if not counts.sum():
        return
    query = np.repeat(np.arange(len(counts)), counts)
    keep = scores >= threshold
    query, scores, ids = query[keep], scores[keep], ids[keep].astype(np.int64)
    order = np.lexsort((ids, -scores, query))  # by query, then best score, then lowest gold index
    query, scores, ids = query[order], scores[order], ids[order]
    first = np.ones(len(query), dtype=bool)
    first[1:] = query[1:] != query[:-1]
    gold_index[start + query[first]] = ids[first]
    similarity[start + query[first]] = scores[first]


SEARCHERS = {"chunked": chunked_matches, "faiss": faiss_matches, "brute": brute_force_matches}


def find_matches(unlabeled: np.ndarray, gold: np.ndarray, threshold: float, *, method: str = "faiss") -> Matches:
    try:
        searcher = SEARCHERS[method]
    except KeyError:
        raise ValueError(f"unknown search method {method!r}; choose one of {', '.join(SEARCHERS)}")
    return searcher(unlabeled, gold, threshold)
