"""The EDOS classifier bench's data: votes on every example, the no-majority dialogues kept apart
from the validation and test splits, and the top-3 hit rate."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "classifier_edos.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("classifier_edos", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_top_3_hit_rate_counts_targets_among_the_three_best(bench):
    probabilities = np.array([[0.5, 0.2, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]])
    assert bench.top_k_hit_rate(probabilities, np.array([3, 2, 0])) == pytest.approx(1 / 3)
    assert bench.top_k_hit_rate(probabilities, np.array([0, 1, 3]), k=1) == pytest.approx(2 / 3)


def test_edos_examples_carry_votes_and_no_majority_dialogues_stay_out_of_the_split(bench):
    if not bench.EDOS_CSV.exists():
        pytest.skip("the EDOS data is not here")
    majority, no_majority = bench.read_examples(bench.EDOS_CSV)
    assert (len(majority), len(no_majority)) == (8910, 1332)
    assert all(example.label in example.votes for example in majority)
    assert all(example.label is None and example.votes for example in no_majority)
    # the split is made from the majority dialogues alone: what it held before votes existed
    _, validation, test = bench.stratified_split(majority, 13)
    assert (len(validation), len(test)) == (1783, 1782)
    assert all(example.label for example in validation + test)
