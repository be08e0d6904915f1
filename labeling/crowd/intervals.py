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


# --- the figures as functions of item weights: weights (B, N) -> (B,) or (B, labels) ---------------
# Every figure is a ratio of weighted sums of per-item terms. The terms are computed once
# (ItemTerms); a block of resamples then costs one matrix product, weights @ terms.


class ItemTerms:
    """The per-item terms of every figure, side by side in one (N, columns) matrix; `wanted`: the
    labels (column indices of `counts`) whose per-label figures are needed."""

    def __init__(self, counts: np.ndarray, wanted: list[int] | None = None):
        n = counts.sum(axis=1, keepdims=True)
        wanted = list(range(counts.shape[1])) if wanted is None else wanted
        self.categories, self.wanted = counts.shape[1], len(wanted)
        chosen, rest = counts[:, wanted], n - counts[:, wanted]
        blocks = {
            "n": n,
            # P_i, the share of an item's answer pairs that agree
            "agreeing": (counts * (counts - 1)).sum(axis=1, keepdims=True) / (n * (n - 1)),
            # sum_c n_ic (n_i - n_ic) / (n_i - 1): the item's disagreeing pairs, alpha's D_o
            "disagreeing": (counts * (n - counts)).sum(axis=1, keepdims=True) / (n - 1),
            "counts": counts,
            "shares": counts / n,
            # per wanted label: its disagreeing pairs and the agreeing share of its two-category table
            "label_disagreeing": chosen * rest / (n - 1),
            "label_agreeing": (chosen * (chosen - 1) + rest * (rest - 1)) / (n * (n - 1)),
        }
        self.columns, start = {}, 0
        for name, block in blocks.items():
            self.columns[name] = slice(start, start + block.shape[1])
            start += block.shape[1]
        self.matrix = np.hstack(list(blocks.values()))
        self.wanted_columns = wanted

    def sums(self, weights: np.ndarray) -> "Sums":
        return Sums(self, weights @ self.matrix, weights.sum(axis=1))


class Sums:
    """Weighted sums of the item terms for a block of resamples, and every figure from them."""

    def __init__(self, terms: ItemTerms, sums: np.ndarray, drawn: np.ndarray):
        self.terms, self.drawn = terms, drawn
        self.of = {name: sums[:, columns] for name, columns in terms.columns.items()}

    def fleiss_kappa(self) -> np.ndarray:
        shares = self.of["counts"] / self.of["n"]
        return _chance_corrected(self.of["agreeing"][:, 0] / self.drawn, (shares**2).sum(axis=1))

    def gwet_ac1(self) -> np.ndarray:
        if self.terms.categories < 2:
            return np.full(len(self.drawn), np.nan)
        shares = self.of["shares"] / self.drawn[:, None]
        expected = (shares * (1 - shares)).sum(axis=1) / (self.terms.categories - 1)
        return _chance_corrected(self.of["agreeing"][:, 0] / self.drawn, expected)

    def krippendorff_alpha(self) -> np.ndarray:
        """Nominal alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
        1 - (n - 1) sum_u sum_c n_uc (m_u - n_uc) / (m_u - 1) / (n^2 - sum_c n_c^2), n the pairable values."""
        pairable = self.of["n"][:, 0]
        expected = pairable**2 - (self.of["counts"] ** 2).sum(axis=1)
        return _alpha(pairable, self.of["disagreeing"][:, 0], expected)

    def label_kappas(self) -> np.ndarray:
        """agreement.per_label_kappa for each wanted label (it weights items by their answer counts,
        so with unequal counts it is not the kappa of the two-category table)."""
        total = self.of["n"]
        shares = self.of["counts"][:, self.terms.wanted_columns] / total
        spread = shares * (1 - shares)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = 1 - self.of["label_disagreeing"] / (total * spread)
        return np.where(spread > 0, kappa, np.nan)

    def label_alphas(self) -> np.ndarray:
        """Nominal alpha of each wanted label's two-category table."""
        pairable = self.of["n"]
        chosen = self.of["counts"][:, self.terms.wanted_columns]
        expected = pairable**2 - chosen**2 - (pairable - chosen) ** 2
        return _alpha(pairable, 2 * self.of["label_disagreeing"], expected)

    def label_ac1s(self) -> np.ndarray:
        """AC1 of each wanted label's two-category table (q = 2: chance 2 pi (1 - pi))."""
        shares = self.of["shares"][:, self.terms.wanted_columns] / self.drawn[:, None]
        return _chance_corrected(self.of["label_agreeing"] / self.drawn[:, None], 2 * shares * (1 - shares))


def _alpha(pairable: np.ndarray, disagreeing: np.ndarray, expected: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (pairable - 1) * disagreeing / expected
    return np.where(expected > 0, alpha, np.nan)


def _chance_corrected(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (observed - expected) / (1 - expected)
    return np.where(expected < 1 - 1e-12, value, np.nan)


def weighted_fleiss_kappa(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ItemTerms(counts, []).sums(weights).fleiss_kappa()


def weighted_gwet_ac1(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ItemTerms(counts, []).sums(weights).gwet_ac1()


def weighted_krippendorff_alpha(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ItemTerms(counts, []).sums(weights).krippendorff_alpha()


def weighted_label_kappas(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ItemTerms(counts).sums(weights).label_kappas()


def weighted_label_alphas(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ItemTerms(counts).sums(weights).label_alphas()


def weighted_label_ac1s(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ItemTerms(counts).sums(weights).label_ac1s()


FIGURES = ("fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
LABEL_FIGURES = {"fleiss_kappa": "label_kappas", "krippendorff_alpha": "label_alphas", "gwet_ac1": "label_ac1s"}


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


def _binary_table(counts: np.ndarray, categories: list[str], label: int) -> RatingTable:
    chosen = counts[:, label].astype(int)
    rows = np.column_stack([chosen, counts.sum(axis=1).astype(int) - chosen]).tolist()
    return RatingTable(categories=[categories[label], "other"], rows=rows)


def point_figures(table: RatingTable) -> dict[str, float | None]:
    return {
        "fleiss_kappa": fleiss_kappa(table),
        "krippendorff_alpha": krippendorff_alpha(table),
        "gwet_ac1": gwet_ac1(table),
    }


def point_figures_per_label(table: RatingTable, labels: list[int]) -> dict[int, dict[str, float | None]]:
    """label index -> its figures: the category-specific kappa, and alpha and AC1 of its two-category table."""
    kappas, counts = per_label_kappa(table), counts_of(table)
    figures = {}
    for label in labels:
        binary = _binary_table(counts, table.categories, label)
        figures[label] = {
            "fleiss_kappa": kappas[table.categories[label]],
            "krippendorff_alpha": krippendorff_alpha(binary),
            "gwet_ac1": gwet_ac1(binary),
        }
    return figures


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
    label_points_of = point_figures_per_label(table, wanted)
    for position, k in enumerate(wanted):
        label_points = label_points_of[k]
        per_label[table.categories[k]] = {
            name: _estimate(label_points[name], label_draws[name][:, position], confidence) for name in FIGURES
        }
    return AgreementIntervals(len(counts), resamples, seed, confidence, overall, per_label)


def _draws(counts: np.ndarray, wanted: list[int], resamples: int, seed: int):
    terms = ItemTerms(counts, wanted)
    overall: dict[str, list] = {name: [] for name in FIGURES}
    per_label: dict[str, list] = {name: [] for name in FIGURES}
    for weights in resample_weights(len(counts), resamples, seed):
        sums = terms.sums(weights)
        for name in FIGURES:
            overall[name].append(getattr(sums, name)())
            per_label[name].append(getattr(sums, LABEL_FIGURES[name])())
    stacked = {name: np.concatenate(values) for name, values in overall.items()}
    return stacked, {name: np.concatenate(values) for name, values in per_label.items()}


def _estimate(point: float | None, draws: np.ndarray, confidence: float) -> Estimate:
    defined = draws[~np.isnan(draws)]
    if point is None or not len(defined):
        return Estimate(point)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return Estimate(float(point), float(low), float(high))
