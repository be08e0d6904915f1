"""How far SBERT expansion's threshold can drop for a given encoder: the label-transfer curve of
nearest-gold matching, measured on held-out gold. Pure: numpy only, no Django.

The paper copies a gold dialogue's label to an unlabeled one whose dialogue embedding has cosine
>= 0.92 with it (`similarity.PAPER_SBERT_THRESHOLD`), a value chosen for the paper's encoder. Another
encoder spreads its cosines differently (all-MiniLM-L6-v2 scores the paper's own similar pairs
0.72 on average), so the number means something else. Here the gold is split in two halves: one
half plays the seeds, the other the "unlabeled" dialogues whose true label is known. For every
threshold, `coverage` is the share of held-out dialogues whose nearest seed is at or above it and
`precision` the share of those whose nearest seed carries their own label. The proposal is the
lowest threshold whose precision stays within `precision_margin` of the precision at the paper's
threshold (or at least a `target_precision` the researcher sets).

The margin rule (a match must beat the best seed of any other label by `margin`) is measured on the
same split at equal coverage (`precision_at_coverage`), so it is kept only where it pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from mlworkers.ml.expansion.similarity import PAPER_SBERT_THRESHOLD

DEFAULT_THRESHOLDS = tuple(round(0.5 + 0.01 * step, 2) for step in range(50))  # 0.50 .. 0.99
DEFAULT_PRECISION_MARGIN = 0.02
MIN_MATCHES = 20  # a point matched by fewer held-out dialogues is too noisy to decide on


@dataclass(frozen=True)
class NearestGold:
    """Per held-out dialogue: its nearest seed's cosine, whether that seed's label is its own, and
    how far that cosine beats the nearest seed of any other label (the margin)."""

    similarity: np.ndarray  # float32
    correct: np.ndarray  # bool
    margin: np.ndarray  # float32; +inf when every seed has the same label


@dataclass(frozen=True)
class CurvePoint:
    threshold: float
    matched: int
    correct: int
    precision: float | None  # None when nothing matched
    coverage: float


@dataclass(frozen=True)
class Proposal:
    threshold: float
    point: CurvePoint
    reference: CurvePoint | None  # the paper's threshold on this curve (None if too few matched there)
    target_precision: float | None
    # "within_margin_of_paper", "target_precision", or the paper's threshold kept:
    # "too_few_matches_at_paper_threshold", "nothing_reaches_target"
    rule: str


def split_halves(count: int, seed: int = 13) -> tuple[np.ndarray, np.ndarray]:
    """(seed rows, held-out rows): a seeded shuffle cut in two, each half sorted."""
    order = np.random.default_rng(seed).permutation(count)
    half = count // 2
    return np.sort(order[:half]), np.sort(order[half:])


def nearest_gold(
    queries: np.ndarray, query_labels: Sequence[str], seeds: np.ndarray, seed_labels: Sequence[str], chunk: int = 2048
) -> NearestGold:
    """Exact nearest seed of every query (L2-normalised rows; ties go to the lower seed index, as
    in `similarity`), and the margin over the best seed of another label."""
    if not len(seeds):
        raise ValueError("no seed dialogues to match against")
    names = sorted(set(seed_labels) | set(query_labels))
    seed_codes = np.searchsorted(names, np.asarray(seed_labels))
    query_codes = np.searchsorted(names, np.asarray(query_labels))
    seeds = np.asarray(seeds, dtype=np.float32)
    parts = []
    for start in range(0, len(queries), chunk):
        scores = np.asarray(queries[start : start + chunk], dtype=np.float32) @ seeds.T
        best = scores.argmax(axis=1)
        best_score = scores[np.arange(len(scores)), best]
        best_code = seed_codes[best]
        other = np.where(seed_codes[None, :] == best_code[:, None], -np.inf, scores).max(axis=1)
        parts.append((best_score, best_code == query_codes[start : start + chunk], best_score - other))
    similarity, correct, margin = (np.concatenate(column) for column in zip(*parts, strict=True))
    return NearestGold(similarity.astype(np.float32), correct.astype(bool), margin.astype(np.float32))


def label_transfer_curve(
    nearest: NearestGold, thresholds: Sequence[float] = DEFAULT_THRESHOLDS, margin: float = 0.0
) -> list[CurvePoint]:
    """Precision and coverage of nearest-gold matching at each threshold (a match also needs its
    margin >= `margin`). Thresholds compare in float32, the similarities' own precision."""
    total = len(nearest.similarity)
    passes_margin = nearest.margin >= np.float32(margin)
    points = []
    for threshold in thresholds:
        hit = (nearest.similarity >= np.float32(threshold)) & passes_margin
        matched, correct = int(hit.sum()), int((hit & nearest.correct).sum())
        precision = correct / matched if matched else None
        points.append(CurvePoint(float(threshold), matched, correct, precision, matched / total if total else 0.0))
    return points


def point_at(curve: Sequence[CurvePoint], threshold: float) -> CurvePoint | None:
    """The curve's point for `threshold`: the highest measured threshold at or below it (its figures
    are what a threshold between two measured ones can be expected to do, rounded down)."""
    below = [point for point in curve if point.threshold <= threshold + 1e-9]
    return max(below, key=lambda point: point.threshold) if below else None


def propose_threshold(
    curve: Sequence[CurvePoint],
    *,
    paper_threshold: float = PAPER_SBERT_THRESHOLD,
    precision_margin: float = DEFAULT_PRECISION_MARGIN,
    target_precision: float | None = None,
    min_matches: int = MIN_MATCHES,
) -> Proposal:
    """The lowest threshold whose precision is at least the target: `target_precision` when given,
    else the precision at the paper's threshold minus `precision_margin`. Points matched by fewer
    than `min_matches` dialogues decide nothing; with none to decide, the paper's threshold stays."""
    reference = point_at(curve, paper_threshold)
    if reference is not None and (reference.matched < min_matches or reference.threshold != paper_threshold):
        reference = None
    if target_precision is None and reference is None:
        return _paper_kept(curve, paper_threshold, None, "too_few_matches_at_paper_threshold")
    rule = "target_precision" if target_precision is not None else "within_margin_of_paper"
    target = float(target_precision) if target_precision is not None else reference.precision - precision_margin
    eligible = [p for p in curve if p.matched >= min_matches and p.precision is not None and p.precision >= target]
    if eligible:
        chosen = min(eligible, key=lambda p: p.threshold)
        return Proposal(chosen.threshold, chosen, reference, round(target, 6), rule)
    return _paper_kept(curve, paper_threshold, target, "nothing_reaches_target", reference)


def _paper_kept(curve, paper_threshold, target, rule, reference=None) -> Proposal:
    paper = point_at(curve, paper_threshold)
    if paper is None:
        raise ValueError(f"the curve has no point at or below the paper's {paper_threshold}")
    return Proposal(paper.threshold, paper, reference, None if target is None else round(target, 6), rule)


def precision_at_coverage(nearest: NearestGold, count: int, margin: float = 0.0) -> float | None:
    """Precision of the `count` most similar matches among those whose margin is >= `margin`:
    compares the margin rule with plain matching at equal coverage (None: fewer than `count` pass)."""
    passes = np.flatnonzero(nearest.margin >= np.float32(margin))
    if count < 1 or len(passes) < count:
        return None
    order = passes[np.argsort(-nearest.similarity[passes], kind="stable")][:count]
    return float(nearest.correct[order].mean())


def random_pair_agreement(labels: Sequence[str]) -> float:
    """The chance that two gold dialogues drawn at random share a label (the floor of precision)."""
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    shares = counts / counts.sum()
    return float((shares**2).sum())


@dataclass(frozen=True)
class Calibration:
    encoder: str
    seeds: int
    held_out: int
    curve: list[CurvePoint]
    proposal: Proposal
    random_pair_agreement: float
    split_seed: int

    def as_json(self) -> dict[str, Any]:
        """What a ModelVersion stores (metrics["expansion_calibration"]) and the job returns."""
        paper = point_at(self.curve, PAPER_SBERT_THRESHOLD)
        return {
            "encoder": self.encoder,
            "threshold": self.proposal.threshold,
            "precision": self.proposal.point.precision,
            "coverage": self.proposal.point.coverage,
            "rule": self.proposal.rule,
            "target_precision": self.proposal.target_precision,
            "paper_threshold": PAPER_SBERT_THRESHOLD,
            "paper_threshold_precision": paper.precision if paper else None,
            "paper_threshold_coverage": paper.coverage if paper else None,
            "seeds": self.seeds,
            "held_out": self.held_out,
            "split_seed": self.split_seed,
            "random_pair_agreement": self.random_pair_agreement,
            "curve": [asdict(point) for point in self.curve],
        }


def calibrate(
    encoder: str,
    vectors: np.ndarray,
    labels: Sequence[str],
    *,
    split_seed: int = 13,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    precision_margin: float = DEFAULT_PRECISION_MARGIN,
    target_precision: float | None = None,
    min_matches: int = MIN_MATCHES,
) -> Calibration:
    """Half the gold as seeds, half held out: the curve and the proposed threshold for `encoder`."""
    if len(vectors) != len(labels):
        raise ValueError(f"{len(vectors)} vectors for {len(labels)} labels")
    if len(labels) < 2:
        raise ValueError("calibration needs at least two gold dialogues")
    seed_rows, held_rows = split_halves(len(labels), split_seed)
    labels = np.asarray(labels)
    thresholds = sorted({*map(float, thresholds), PAPER_SBERT_THRESHOLD})
    nearest = nearest_gold(vectors[held_rows], labels[held_rows], vectors[seed_rows], labels[seed_rows])
    curve = label_transfer_curve(nearest, thresholds)
    proposal = propose_threshold(
        curve, precision_margin=precision_margin, target_precision=target_precision, min_matches=min_matches
    )
    return Calibration(
        encoder, len(seed_rows), len(held_rows), curve, proposal, random_pair_agreement(labels), split_seed
    )


def curve_from_json(stored: dict[str, Any]) -> list[CurvePoint]:
    return [CurvePoint(**point) for point in stored.get("curve", [])]
