"""What int8 costs and gains on the CPU: a saved dialogue classifier scored on the EDOS test split in
fp32 and in int8 (its encoder's linear layers dynamically quantized, mlworkers/ml/classifier/quantize.py).

The test split is bench/classifier_edos.py's: the same reader and stratified split (split seed 13 by
default), so a classifier that script saved with `--save DIR` (`DIR/seed-13/`) is scored on exactly
the dialogues it was tested on; its fp32 figures here should equal the ones it saved beside the
folder (`DIR/seed-13.json`), which this prints when it finds them. Speed is turns per second through
the project's inference path (tokenize, length-sorted batches of 64, softmax), each precision timed
`--repeats` times, interleaved, the best run kept (the machine is shared: the best run is the one
least disturbed). EDOS is read in place, never copied.

    .venv/bin/python bench/int8_edos.py --model /work/ckpt/classifier/seed-13
    .venv/bin/python bench/int8_edos.py --model DIR1 DIR2 DIR3     # several seeds: the means at the end

Ends with one line: fp32_macro_f1=<x> int8_macro_f1=<x> cost_points=<100 x (fp32 - int8)> speedup=<int8/fp32 turns/s>
"""

import os

# OpenMP threads that spin while waiting steal a shared CPU from each other; wait passively.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from classifier_edos import EDOS_CSV, read_examples, stratified_split, top_k_hit_rate

from mlworkers.ml.classifier import inference
from mlworkers.ml.classifier.dialogue_classifier import load_classifier, load_for_inference
from mlworkers.ml.metrics import classification_report


def test_split(csv: Path, split_seed: int) -> list:
    majority, _ = read_examples(csv)
    return stratified_split(majority, split_seed)[2]


def timed_probabilities(clf, examples: list, batch_size: int) -> tuple[np.ndarray, float]:
    started = time.perf_counter()
    probabilities = inference.predict_examples(clf, examples, batch_size=batch_size)
    return probabilities, len(examples) / (time.perf_counter() - started)


def scores(clf, probabilities: np.ndarray, examples: list) -> dict:
    targets = np.array([clf.label_names.index(example.label) for example in examples])
    report = classification_report(targets, probabilities.argmax(axis=1), clf.label_names)
    return {
        "macro_f1": report["macro_f1"],
        "accuracy": report["accuracy"],
        "top3": top_k_hit_rate(probabilities, targets),
    }


def score_model(directory: Path, test: list, args: argparse.Namespace) -> dict:
    models = {
        "fp32": load_classifier(directory, device="cpu", precision_name="fp32"),
        "int8": load_for_inference(directory, device="cpu", precision_name="int8"),
    }
    assert models["int8"].precision == "int8", models["int8"].precision
    for clf in models.values():  # warm-up: the first batches pay for allocations and kernel set-up
        inference.predict_examples(clf, test[: args.batch_size], batch_size=args.batch_size)
    rates = {name: [] for name in models}
    probabilities = {}
    for _ in range(args.repeats):
        for name, clf in models.items():
            probabilities[name], rate = timed_probabilities(clf, test, args.batch_size)
            rates[name].append(rate)
    result = {}
    for name, clf in models.items():
        result[name] = scores(clf, probabilities[name], test) | {"turns_per_s": max(rates[name])}
        figures = result[name]
        print(
            f"{directory.name} {name}: macro-F1 {figures['macro_f1']:.4f}, accuracy {figures['accuracy']:.4f}, "
            f"top-3 {figures['top3']:.4f}, {figures['turns_per_s']:.1f} turns/s "
            f"(runs: {', '.join(f'{rate:.1f}' for rate in rates[name])})",
            flush=True,
        )
    agree = float((probabilities["fp32"].argmax(axis=1) == probabilities["int8"].argmax(axis=1)).mean())
    gap = float(np.abs(probabilities["fp32"] - probabilities["int8"]).max())
    print(f"{directory.name}: int8 and fp32 agree on the top label for {agree:.4f} of the turns; max |dp| {gap:.4f}")
    # activations are scaled per token, so a turn's int8 result should not depend on the turns batched
    # with it: the first --alone dialogues scored one at a time vs in the batches above
    sample = test[: args.alone]
    if sample:
        alone = inference.predict_examples(models["int8"], sample, batch_size=1)
        batched = probabilities["int8"][: len(sample)]
        print(
            f"{directory.name}: int8 alone vs batched ({len(sample)} dialogues): top label agrees on "
            f"{float((alone.argmax(axis=1) == batched.argmax(axis=1)).mean()):.4f}, "
            f"max |dp| {float(np.abs(alone - batched).max()):.4f}"
        )
    saved = directory.parent / f"{directory.name}.json"
    if saved.exists():
        recorded = json.loads(saved.read_text()).get("scores", {})
        if "macro_f1" in recorded:
            print(
                f"{directory.name}: {saved.name} recorded test macro-F1 {recorded['macro_f1']:.4f}, "
                f"accuracy {recorded.get('accuracy', float('nan')):.4f} (fp32 here: {result['fp32']['macro_f1']:.4f})"
            )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, nargs="+", required=True, help="saved classifier folder(s)")
    parser.add_argument("--csv", type=Path, default=EDOS_CSV)
    parser.add_argument("--split-seed", type=int, default=13, help="bench/classifier_edos.py's split seed")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each precision (the best is kept)")
    parser.add_argument("--limit", type=int, default=0, help="score only the first N test dialogues (a smoke run)")
    parser.add_argument("--alone", type=int, default=200, help="dialogues also scored one at a time in int8")
    args = parser.parse_args()
    if not args.csv.exists():
        sys.exit(f"EDOS file not found: {args.csv}")
    for directory in args.model:
        if not (directory / "classifier.json").exists():
            sys.exit(f"--model {directory}: not a saved dialogue classifier (no classifier.json)")
    torch.set_num_threads(args.threads)
    test = test_split(args.csv, args.split_seed)
    if args.limit:
        test = test[: args.limit]
    print(
        f"EDOS test split (split seed {args.split_seed}): {len(test)} dialogues; CPU, {args.threads} threads, "
        f"batch {args.batch_size}, int8 activations scaled per token (mlworkers.ml.classifier.quantize.Int8Linear)"
    )
    results = [score_model(directory, test, args) for directory in args.model]
    mean = {
        name: {key: float(np.mean([result[name][key] for result in results])) for key in results[0][name]}
        for name in ("fp32", "int8")
    }
    costs = [100 * (result["fp32"]["macro_f1"] - result["int8"]["macro_f1"]) for result in results]
    if len(results) > 1:
        print(
            f"{len(results)} models: macro-F1 cost per model (points): {', '.join(f'{cost:.2f}' for cost in costs)}; "
            f"fp32 {mean['fp32']['macro_f1']:.4f}, int8 {mean['int8']['macro_f1']:.4f}; "
            f"accuracy fp32 {mean['fp32']['accuracy']:.4f}, int8 {mean['int8']['accuracy']:.4f}; "
            f"top-3 fp32 {mean['fp32']['top3']:.4f}, int8 {mean['int8']['top3']:.4f}"
        )
    print(
        f"fp32_macro_f1={mean['fp32']['macro_f1']:.4f} int8_macro_f1={mean['int8']['macro_f1']:.4f} "
        f"cost_points={float(np.mean(costs)):.2f} "
        f"speedup={mean['int8']['turns_per_s'] / mean['fp32']['turns_per_s']:.2f}"
    )


if __name__ == "__main__":
    main()
