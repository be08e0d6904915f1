"""The expansion threshold calibrated to its encoder, pure core (numpy, no Django): a toy encoder
whose similar pairs are known gets the threshold its curve implies; the margin rule; the rounds
table reports each SBERT round's threshold; the paper's constants stay as the paper set them."""

from collections import Counter

import numpy as np
import pytest

from mlworkers.ml.expansion import calibration as calib
from mlworkers.ml.rounds import self_labeling as rounds
from tests.mlworkers.test_rounds import LABELS, corpus, keyword_learner  # noqa: F401  (corpus is a fixture)

SEED_LABELS = ["Joyful", "Sad", "Angry", "Calm"] * 3  # 12 seeds, one basis vector each


def toy_encoder(groups: list[tuple[float, int, int]], dim: int = 400) -> tuple[np.ndarray, list, np.ndarray, list]:
    """(seeds, seed labels, queries, query labels). Seed k is basis vector k; each group
    (cosine, right, wrong) adds `right` queries at exactly that cosine to a seed of their own label
    and `wrong` at that cosine to a seed of another label, orthogonal to every other seed."""
    seeds = np.eye(len(SEED_LABELS), dim, dtype=np.float32)
    queries, labels, noise = [], [], len(SEED_LABELS)
    for cosine, right, wrong in groups:
        for index in range(right + wrong):
            seed = index % len(SEED_LABELS)
            own = SEED_LABELS[seed] if index < right else SEED_LABELS[(seed + 1) % len(SEED_LABELS)]
            vector = np.zeros(dim, dtype=np.float32)
            vector[seed], vector[noise] = cosine, np.sqrt(1 - cosine**2)
            queries.append(vector)
            labels.append(own)
            noise += 1
    return seeds, SEED_LABELS, np.array(queries), labels


# 40 queries at 0.953 (all right), 40 at 0.853 (36 right), 40 at 0.753 (20 right)
KNOWN_PAIRS = [(0.953, 40, 0), (0.853, 36, 4), (0.753, 20, 20)]


def known_curve(groups=KNOWN_PAIRS):
    seeds, seed_labels, queries, labels = toy_encoder(groups)
    nearest = calib.nearest_gold(queries, labels, seeds, seed_labels)
    return nearest, calib.label_transfer_curve(nearest)


def test_the_curve_of_a_toy_encoder_counts_its_known_pairs():
    _, curve = known_curve()
    at = {round(point.threshold, 2): point for point in curve}
    assert (at[0.95].matched, at[0.95].correct, at[0.96].matched) == (40, 40, 0)
    assert (at[0.86].matched, at[0.85].matched, at[0.85].correct) == (40, 80, 76)
    assert (at[0.75].matched, at[0.75].correct, at[0.50].matched) == (120, 96, 120)
    assert at[0.85].precision == pytest.approx(0.95) and at[0.75].coverage == pytest.approx(1.0)
    assert at[0.96].precision is None


def test_a_toy_encoder_gets_the_threshold_its_curve_implies():
    _, curve = known_curve()
    # at the paper's 0.92 precision is 1.0: within 0.02 means 0.98, first reached at 0.86
    assert calib.propose_threshold(curve, precision_margin=0.02).threshold == 0.86
    # within 0.06 (0.94): 0.85 .. 0.76 give 0.95, so 0.76
    assert calib.propose_threshold(curve, precision_margin=0.06).threshold == 0.76
    # a target precision of 0.79 is met everywhere (0.80 at the bottom of the grid)
    proposal = calib.propose_threshold(curve, target_precision=0.79)
    assert (proposal.threshold, proposal.rule, proposal.point.coverage) == (0.5, "target_precision", 1.0)


def test_it_keeps_the_papers_threshold_when_too_few_dialogues_match_there():
    _, curve = known_curve([(0.953, 5, 0), (0.853, 36, 4)])
    proposal = calib.propose_threshold(curve, min_matches=20)
    assert (proposal.threshold, proposal.rule) == (0.92, "too_few_matches_at_paper_threshold")
    unreachable = calib.propose_threshold(curve, target_precision=0.99, min_matches=20)
    assert (unreachable.threshold, unreachable.rule) == (0.92, "nothing_reaches_target")


def test_calibrate_splits_the_gold_in_halves_and_stores_the_curve_as_json():
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((4, 32))
    labels = [SEED_LABELS[i % 4] for i in range(200)]
    vectors = np.array([centres[i % 4] + 0.3 * rng.standard_normal(32) for i in range(200)], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    calibration = calib.calibrate("toy", vectors, labels, min_matches=5)
    stored = calibration.as_json()
    assert (stored["seeds"], stored["held_out"], stored["encoder"]) == (100, 100, "toy")
    assert stored["random_pair_agreement"] == pytest.approx(0.25)
    curve = calib.curve_from_json(stored)
    assert any(point.threshold == rounds.PAPER_SBERT_THRESHOLD for point in curve)
    assert calib.point_at(curve, stored["threshold"]).precision == stored["precision"]
    seeds, held = calib.split_halves(200)
    assert not set(seeds) & set(held) and len(set(seeds) | set(held)) == 200


def test_the_margin_rule_drops_matches_a_close_other_label_could_have_taken():
    seeds = np.eye(3, 8, dtype=np.float32)
    seed_labels = ["Joyful", "Sad", "Sad"]
    close_call = np.array([[0.80, 0.79, 0, 0.6, 0, 0, 0, 0]], dtype=np.float32)  # Joyful by 0.01: wrong
    clear = np.array([[0, 0.78, 0, 0, 0.62, 0, 0, 0]], dtype=np.float32)  # Sad, far from any Joyful: right
    queries = np.vstack([close_call, clear])
    nearest = calib.nearest_gold(queries, ["Sad", "Sad"], seeds, seed_labels)
    assert nearest.margin == pytest.approx([0.01, 0.78], abs=1e-6)
    assert calib.precision_at_coverage(nearest, 1) == 0.0  # plain: the closest match, the wrong one
    assert calib.precision_at_coverage(nearest, 1, margin=0.02) == 1.0  # margin: the clear one
    assert calib.precision_at_coverage(nearest, 2, margin=0.02) is None  # only one passes
    assert [p.matched for p in calib.label_transfer_curve(nearest, [0.7], margin=0.02)] == [1]


def test_the_rounds_table_reports_each_sbert_rounds_expansion_and_its_notes(corpus):  # noqa: F811
    gold, test, unlabeled, lookup = corpus
    notes = {2: {"threshold_source": "calibrated", "predicted_precision": 0.7}, 4: {"threshold_source": "paper"}}
    config = rounds.RoundsConfig(label_names=LABELS, self_per_label=2, expansion_notes=notes)
    outcome = rounds.run_rounds(gold, test, unlabeled, [keyword_learner()], rounds.vector_expander(lookup), config)
    table = outcome.table()
    by_round = Counter(label.round for label in outcome.new_labels)
    assert (table[1]["expanded"], table[1]["threshold"], table[1]["predicted_precision"]) == (by_round[2], 0.92, 0.7)
    assert (table[3]["expanded"], table[3]["threshold"], table[3]["threshold_source"]) == (by_round[4], 0.9, "paper")
    assert "threshold" not in table[0] and "expanded" not in table[2]


def test_the_papers_constants_are_untouched():
    assert (rounds.PAPER_SBERT_THRESHOLD, rounds.PAPER_SECOND_SBERT_THRESHOLD) == (0.92, 0.9)
    config = rounds.RoundsConfig(label_names=LABELS)
    assert (config.first_threshold, config.second_threshold) == (0.92, 0.9)
    _, curve = known_curve()
    calib.propose_threshold(curve, precision_margin=0.06)
    assert rounds.PAPER_SBERT_THRESHOLD == 0.92
