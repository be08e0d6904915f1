"""Train the dialogue classifier (EmoBERT+) on the EDOS crowd majority and score it on a held-out split.

Data: /work/shared/data/edos/MTurk_groundtruth_labels_9K.csv, read in place. Each dialogue with a
2-of-3 majority label among the 41 labels is one example (its last line is the labeled turn);
60/20/20 split stratified by label with a fixed seed. The packaged MiniLM on the CPU by default.

    .venv/bin/python bench/classifier_edos.py                 # the full bench
    .venv/bin/python bench/classifier_edos.py --epochs 1 --limit 2000   # a smoke run

Ends with one line: macro_f1=<x> accuracy=<x> train_s=<s>
"""

import os

# On a shared CPU, OpenMP threads that spin while waiting steal the cores from each other (a
# 4-10x slow-down measured with two threads under load); passive waiting avoids it. Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.taxonomy import LABEL_NAMES, canonical_label
from mlworkers.ml.dialogue_classifier import DialogueExample, TrainConfig, evaluate, train

EDOS_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"
MAJORITY_COLUMN = "Agreed emotion (2/3 vote)"


def read_majority_examples(path: Path) -> list[DialogueExample]:
    """One example per dialogue whose 2-of-3 majority is one of the 41 labels."""
    examples = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            label = canonical_label(row[MAJORITY_COLUMN])
            # "-" (no majority) and labels typed in through "Other" are not among the 41
            if label is None or "(Other)" in row[MAJORITY_COLUMN]:
                continue
            turns = [line.strip() for line in row["Dialog"].split("\n") if line.strip()]
            if turns:
                examples.append(DialogueExample(turns, label))
    return examples


def stratified_split(examples: list, seed: int, fractions=(0.6, 0.2)) -> tuple[list, list, list]:
    """Per label: shuffle, then cut 60 % / 20 % / the rest."""
    rng = np.random.default_rng(seed)
    by_label: dict[str, list] = {}
    for example in examples:
        by_label.setdefault(example.label, []).append(example)
    train_set, validation, test = [], [], []
    for label in sorted(by_label):
        group = [by_label[label][i] for i in rng.permutation(len(by_label[label]))]
        cut_train = round(fractions[0] * len(group))
        cut_validation = cut_train + round(fractions[1] * len(group))
        train_set += group[:cut_train]
        validation += group[cut_train:cut_validation]
        test += group[cut_validation:]
    return train_set, validation, test


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=EDOS_CSV)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-4, help="encoder lr (TrainConfig default: 2e-5, the paper's)")
    parser.add_argument("--head-lr", type=float, default=1e-3, help="lr of the new layers")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--schedule", default="linear", choices=["constant", "linear", "cosine"])
    parser.add_argument("--warmup", type=float, default=0.06, help="share of the steps spent warming up")
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--turn-weight-decay", type=float, default=0.5)
    parser.add_argument("--max-tokens", type=int, default=100)
    parser.add_argument("--limit", type=int, default=0, help="use only this many dialogues (0 = all)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if not args.csv.exists():
        sys.exit(f"EDOS file not found: {args.csv}")
    import torch

    torch.set_num_threads(args.threads)
    examples = read_majority_examples(args.csv)
    if args.limit:
        examples = [examples[i] for i in np.random.default_rng(args.seed).permutation(len(examples))[: args.limit]]
    train_set, validation, test = stratified_split(examples, args.seed)
    config = TrainConfig(
        base_model=args.model,
        max_tokens=args.max_tokens,
        lr=args.lr,
        head_lr=args.head_lr,
        epochs=args.epochs,
        batch_size=args.batch_size,
        schedule=args.schedule,
        warmup_ratio=args.warmup,
        label_smoothing=args.label_smoothing,
        turn_weight_decay=args.turn_weight_decay,
        seed=args.seed,
        device=args.device,
        num_threads=args.threads,
    )
    print(f"examples: {len(examples)} (train {len(train_set)}, validation {len(validation)}, test {len(test)})")
    print(
        f"overrides of the paper defaults: lr={args.lr} head_lr={args.head_lr} schedule={args.schedule} "
        f"warmup={args.warmup} label_smoothing={args.label_smoothing}"
    )
    print(f"config: {config.to_dict()}", flush=True)
    started = time.perf_counter()
    clf = train(train_set, validation, list(LABEL_NAMES), config, progress=_print_progress(started))
    train_s = time.perf_counter() - started
    print(f"best epoch (lowest validation loss): {clf.best_epoch}")
    report = evaluate(clf, test)
    print(
        f"test: macro-F1 {report['macro_f1']:.4f}, accuracy {report['accuracy']:.4f}, "
        f"macro precision {report['macro_precision']:.4f}, macro recall {report['macro_recall']:.4f}, "
        f"{report['labels_scored']} labels, n={report['n']}"
    )
    print(f"training time: {train_s:.0f} s on {args.device} with {args.threads} threads")
    print(f"macro_f1={report['macro_f1']:.4f} accuracy={report['accuracy']:.4f} train_s={train_s:.0f}")


def _print_progress(started: float):
    def progress(done: int, total: int, message: str) -> None:
        print(f"[{time.perf_counter() - started:7.0f}s] step {done}/{total} {message}", flush=True)

    return progress


if __name__ == "__main__":
    main()
