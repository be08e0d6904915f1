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


def test_the_bench_defaults_are_the_measured_recipe_the_pipeline_trains_with(bench, monkeypatch):
    from mlworkers.ml.classifier.dialogue_classifier import MEASURED_RECIPE

    monkeypatch.setattr("sys.argv", ["classifier_edos.py"])
    config = bench._config(bench.parse_args(), seed=13)
    assert {key: getattr(config, key) for key in MEASURED_RECIPE} == MEASURED_RECIPE
    assert (config.soft_target_weight, config.ema_decay, config.epochs) == (1.0, 0.995, 3)


def test_a_saved_seed_is_read_back_only_for_the_same_recipe_and_splits(bench, tmp_path, monkeypatch):
    from mlworkers.ml.classifier.model import DialogueExample

    monkeypatch.setattr("sys.argv", ["classifier_edos.py", "--save", str(tmp_path)])
    args = bench.parse_args()
    split = [DialogueExample(["hi", "I won!"], "Joyful", ("Joyful", "Joyful", "Proud"))]
    splits = {name: bench._fingerprint(split) for name in ("train", "validation", "test")}
    recipe = bench._recipe(bench._config(args, 13), splits)
    scores = {"macro_f1": 0.5, "accuracy": 0.5, "top3": 0.9, "val_macro_f1": 0.4, "train_s": 3.0}
    (tmp_path / "seed-13.json").write_text(bench.json.dumps({"recipe": recipe, "scores": scores}))
    assert bench._saved_scores(args, 13, recipe) == scores
    assert bench._saved_scores(args, 14, recipe) is None  # no file for that seed
    relabeled = [DialogueExample(["hi", "I won!"], "Proud", ("Joyful", "Joyful", "Proud"))]
    other_split = dict(splits, test=bench._fingerprint(relabeled))
    assert other_split["test"] != splits["test"]
    assert bench._saved_scores(args, 13, bench._recipe(bench._config(args, 13), other_split)) is None
    monkeypatch.setattr("sys.argv", ["classifier_edos.py", "--save", str(tmp_path), "--epochs", "2"])
    other_recipe = bench._recipe(bench._config(bench.parse_args(), 13), splits)
    assert bench._saved_scores(args, 13, other_recipe) is None
    # where and how fast it ran is not part of the recipe
    monkeypatch.setattr("sys.argv", ["classifier_edos.py", "--save", str(tmp_path), "--threads", "1"])
    assert bench._recipe(bench._config(bench.parse_args(), 13), splits) == recipe
