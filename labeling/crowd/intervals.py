"""Agreement with its uncertainty: Fleiss' kappa, Krippendorff's alpha (nominal) and Gwet's AC1, each
with a percentile bootstrap interval over items, overall and per label. Pure numpy, no Django.

The point figures come from labeling.crowd.agreement (kappa, AC1, per-label kappa) and from the
`krippendorff` package (alpha). A bootstrap needs each figure a thousand times over resampled
items, so here each figure is also written as a function of item weights (how often each item was
drawn): one matrix product per figure for a whole block of resamples. At weight 1 for every item
the weighted forms equal the point functions exactly; tests/labeling/test_study_report_intervals.py
checks that, so there is one definition of each figure and one fast way to resample it.

Per label: Fleiss (1971)'s category-specific kappa (agreement.per_label_kappa), and alpha and AC1
of the two-category table "this label" against "any other answer".
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import krippendorff
import numpy as np

from labeling.crowd.agreement import RatingTable, fleiss_kappa, gwet_ac1, per_label_kappa

CONFIDENCE = 0.95
_BLOCK = 128  # resamples per matrix product: bounds memory at _BLOCK x items weights
_PACKAGE_CELLS = 20_000_000  # the package builds items x categories^2 arrays; above this, the closed form


@dataclass(frozen=True)
class Estimate:
    value: float | None
    low: float | None = None
    high: float | None = None

    def as_dict(self, digits: int = 4) -> dict:
        return {key: None if v is None else round(v, digits) for key, v in vars(self).items()}


@dataclass(frozen=True)
class AgreementIntervals:
    items: int
    resamples: int
    seed: int
    confidence: float
    overall: dict[str, Estimate]  # "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"
    per_label: dict[str, dict[str, Estimate]] = field(default_factory=dict)  # label -> figure -> estimate


def counts_of(table: RatingTable) -> np.ndarray:
    return np.asarray(table.rows, dtype=float).reshape(len(table.rows), len(table.categories))


# --- the figures as functions of item weights: weights (B, N), counts (N, K) -> (B,) or (B, K) ---


def _pairwise_agreement(counts: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=1)
    return (counts * (counts - 1)).sum(axis=1) / (n * (n - 1))


def weighted_fleiss_kappa(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    observed = weights @ _pairwise_agreement(counts) / weights.sum(axis=1)
    shares = (weights @ counts) / (weights @ counts.sum(axis=1))[:, None]
    expected = (shares**2).sum(axis=1)
    return _chance_corrected(observed, expected)


def weighted_gwet_ac1(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    if counts.shape[1] < 2:
        return np.full(len(weights), np.nan)
    observed = weights @ _pairwise_agreement(counts) / weights.sum(axis=1)
    item_shares = counts / counts.sum(axis=1, keepdims=True)
    shares = (weights @ item_shares) / weights.sum(axis=1)[:, None]
    expected = (shares * (1 - shares)).sum(axis=1) / (counts.shape[1] - 1)
    return _chance_corrected(observed, expected)


def weighted_krippendorff_alpha(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Nominal alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
    1 - (n - 1) * sum_u sum_c n_uc (m_u - n_uc) / (m_u - 1) / (n^2 - sum_c n_c^2), n the pairable values."""
    m = counts.sum(axis=1)
    disagreeing = (counts * (m[:, None] - counts)).sum(axis=1) / (m - 1)
    pairable = weights @ m
    by_value = weights @ counts
    expected = pairable**2 - (by_value**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (pairable - 1) * (weights @ disagreeing) / expected
    return np.where(expected > 0, alpha, np.nan)


def _chance_corrected(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (observed - expected) / (1 - expected)
    return np.where(expected < 1 - 1e-12, value, np.nan)


def _binary(counts: np.ndarray, label: int) -> np.ndarray:
    """The two-category table: answers for `label` against all the others."""
    chosen = counts[:, label]
    return np.column_stack([chosen, counts.sum(axis=1) - chosen])


def weighted_label_kappas(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B, K): agreement.per_label_kappa, every label at once (it weights items by their answer
    counts, so with unequal counts it is not the kappa of the two-category table)."""
    n = counts.sum(axis=1, keepdims=True)
    disagreement = weights @ (counts * (n - counts) / (n - 1))
    total = weights @ n[:, 0]
    shares = (weights @ counts) / total[:, None]
    spread = shares * (1 - shares)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1 - disagreement / (total[:, None] * spread)
    return np.where(spread > 0, kappa, np.nan)


def weighted_label_alphas(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B, K): weighted_krippendorff_alpha of each label's two-category table, every label at once."""
    n = counts.sum(axis=1, keepdims=True)
    disagreeing = weights @ (2 * counts * (n - counts) / (n - 1))
    pairable = (weights @ n[:, 0])[:, None]
    chosen = weights @ counts
    expected = pairable**2 - chosen**2 - (pairable - chosen) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (pairable - 1) * disagreeing / expected
    return np.where(expected > 0, alpha, np.nan)


def weighted_label_ac1s(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B, K): weighted_gwet_ac1 of each label's two-category table, every label at once."""
    n = counts.sum(axis=1, keepdims=True)
    rest = n - counts
    agreeing = (counts * (counts - 1) + rest * (rest - 1)) / (n * (n - 1))
    drawn = weights.sum(axis=1, keepdims=True)
    observed = weights @ agreeing / drawn
    shares = weights @ (counts / n) / drawn
    return _chance_corrected(observed, 2 * shares * (1 - shares))


def _per_label(weights: np.ndarray, counts: np.ndarray, wanted: list[int]) -> dict[str, np.ndarray]:
    """figure -> (B, len(wanted)): each wanted label's figure."""
    return {
        "fleiss_kappa": weighted_label_kappas(weights, counts)[:, wanted],
        "krippendorff_alpha": weighted_label_alphas(weights, counts)[:, wanted],
        "gwet_ac1": weighted_label_ac1s(weights, counts)[:, wanted],
    }


FIGURES: dict[str, Callable] = {
    "fleiss_kappa": weighted_fleiss_kappa,
    "krippendorff_alpha": weighted_krippendorff_alpha,
    "gwet_ac1": weighted_gwet_ac1,
}


# --- point figures: from agreement.py and the krippendorff package ---


def krippendorff_alpha(table: RatingTable) -> float | None:
    """Nominal alpha by the `krippendorff` package; for tables too large for its items x categories^2
    arrays (e.g. 10k items with 190 distinct typed answers), its closed form above, which tests check
    against the package."""
    counts = counts_of(table)
    if not len(counts) or np.count_nonzero(counts.sum(axis=0)) < 2:
        return None
    if counts.size * counts.shape[1] <= _PACKAGE_CELLS:
        value = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    else:
        value = weighted_krippendorff_alpha(np.ones((1, len(counts))), counts)[0]
    return None if value is None or np.isnan(value) else float(value)


def _binary_table(table: RatingTable, label: int) -> RatingTable:
    rows = [[row[label], sum(row) - row[label]] for row in table.rows]
    return RatingTable(categories=[table.categories[label], "other"], rows=rows)


def point_figures(table: RatingTable) -> dict[str, float | None]:
    return {
        "fleiss_kappa": fleiss_kappa(table),
        "krippendorff_alpha": krippendorff_alpha(table),
        "gwet_ac1": gwet_ac1(table),
    }


def point_figures_per_label(table: RatingTable, label: int) -> dict[str, float | None]:
    binary = _binary_table(table, label)
    return {
        "fleiss_kappa": per_label_kappa(table)[table.categories[label]],
        "krippendorff_alpha": krippendorff_alpha(binary),
        "gwet_ac1": gwet_ac1(binary),
    }


# --- the bootstrap ---


def resample_weights(items: int, resamples: int, seed: int):
    """Blocks of (resamples, items) draw counts: item i drawn w times in a resample of `items` items."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < resamples:
        size = min(_BLOCK, resamples - done)
        yield rng.multinomial(items, np.full(items, 1 / items), size=size).astype(float)
        done += size


def agreement_intervals(
    table: RatingTable,
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    labels: list[str] | None = None,
) -> AgreementIntervals:
    """Every figure with its percentile interval; `labels` picks the per-label rows (default: all
    categories). Resamples in which a figure is undefined (one category only) are left out of its
    interval."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    counts = counts_of(table)
    wanted = [table.categories.index(label) for label in (labels if labels is not None else table.categories)]
    if not len(counts):
        empty = {name: Estimate(None) for name in FIGURES}
        return AgreementIntervals(0, resamples, seed, confidence, empty, {table.categories[k]: empty for k in wanted})
    overall_draws, label_draws = _draws(counts, wanted, resamples, seed)
    points = point_figures(table)
    overall = {name: _estimate(points[name], overall_draws[name], confidence) for name in FIGURES}
    per_label = {}
    for position, k in enumerate(wanted):
        label_points = point_figures_per_label(table, k)
        per_label[table.categories[k]] = {
            name: _estimate(label_points[name], label_draws[name][:, position], confidence) for name in FIGURES
        }
    return AgreementIntervals(len(counts), resamples, seed, confidence, overall, per_label)


def _draws(counts: np.ndarray, wanted: list[int], resamples: int, seed: int):
    overall: dict[str, list] = {name: [] for name in FIGURES}
    per_label: dict[str, list] = {name: [] for name in FIGURES}
    for weights in resample_weights(len(counts), resamples, seed):
        labels = _per_label(weights, counts, wanted)
        for name, figure in FIGURES.items():
            overall[name].append(figure(weights, counts))
            per_label[name].append(labels[name])
    stacked = {name: np.concatenate(values) for name, values in overall.items()}
    return stacked, {name: np.concatenate(values) for name, values in per_label.items()}


def _estimate(point: float | None, draws: np.ndarray, confidence: float) -> Estimate:
    defined = draws[~np.isnan(draws)]
    if point is None or not len(defined):
        return Estimate(point)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return Estimate(float(point), float(low), float(high))
