"""Train the dialogue classifier (EmoBERT+) on the EDOS crowd majority and score it on a held-out split.

Data: /work/shared/data/edos/MTurk_groundtruth_labels_9K.csv, read in place. Each dialogue with a
2-of-3 majority label among the 41 labels is one example (its last line is the labeled turn);
60/20/20 split stratified by label with a fixed seed (`--split-seed`, 13: the same test split
whatever the training seed). The packaged MiniLM on the CPU by default. Each example carries the
three workers' answers (`votes`): by default the target is the vote distribution (`--soft-weight 1`),
the 1,332 dialogues with no 2-of-3 majority join the TRAINING split only, with their votes as the
target (`--majority-only` leaves them out), and the kept weights are an EMA (`--ema-decay 0.995`).
Every choice is made on the validation split; the test split is only scored. The earlier recipe:
`--epochs 5 --soft-weight 0 --majority-only --ema-decay 0`.

    .venv/bin/python bench/classifier_edos.py                 # the full bench, one seed
    .venv/bin/python bench/classifier_edos.py --seeds 3       # mean and spread over three seeds
    .venv/bin/python bench/classifier_edos.py --epochs 1 --limit 2000   # a smoke run

`--save DIR` keeps each seed's classifier (`DIR/seed-<n>/`) and its scores (`DIR/seed-<n>.json`,
with the recipe and the split sizes). A later run with the same DIR reads a seed whose recipe and
splits match instead of training it again (it says so), so the seeds of `--seeds 3` can train in
separate processes (`--seed 14 --threads 1 --save DIR`, ...) and one last run reports them together;
an interrupted `--seeds 3` resumes at the first unsaved seed. `--ensemble` (with `--save` and
`--seeds N`) also scores the average of the seeds' probabilities: the most a distilled student of
them could reach (it adds `ensemble_macro_f1= ensemble_accuracy= ensemble_top3=` to the last line).

Ends with one line: macro_f1=<x> accuracy=<x> top3=<x> train_s=<s> wall_s=<s>
(with --seeds N: the means, and macro_f1_sd=<x> the standard deviation over the seeds)
"""

import os

# On a shared CPU, OpenMP threads that spin while waiting steal the cores from each other (a
# 4-10x slow-down measured with two threads under load); passive waiting avoids it. Set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import csv
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.taxonomy import LABEL_NAMES, canonical_label
from mlworkers.ml.classifier.dialogue_classifier import MEASURED_RECIPE, predict_proba, train
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig
from mlworkers.ml.metrics import classification_report

EDOS_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"
MAJORITY_COLUMN = "Agreed emotion (2/3 vote)"
VOTE_COLUMNS = ("Worker 1 answer", "Worker 2 answer", "Worker 3 answer")


def read_majority_examples(path: Path) -> list[DialogueExample]:
    """One example per dialogue whose 2-of-3 majority is one of the 41 labels, with its votes."""
    return read_examples(path)[0]


def read_examples(path: Path) -> tuple[list[DialogueExample], list[DialogueExample]]:
    """(majority examples, no-majority examples): the second have no label, only the votes among
    the 41 labels (answers typed in through "Other" are left out); one with none is dropped."""
    majority, no_majority = [], []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            turns = [line.strip() for line in row["Dialog"].split("\n") if line.strip()]
            votes = tuple(vote for vote in map(_label_of, (row[column] for column in VOTE_COLUMNS)) if vote)
            if not turns:
                continue
            label = _label_of(row[MAJORITY_COLUMN])
            if label:
                majority.append(DialogueExample(turns, label, votes))
            elif row[MAJORITY_COLUMN].strip() == "-" and votes:
                no_majority.append(DialogueExample(turns, None, votes))
    return majority, no_majority


def _label_of(answer: str) -> str | None:
    # "-" (no majority) and labels typed in through "Other" are not among the 41
    return None if "(Other)" in answer else canonical_label(answer)


def top_k_hit_rate(probabilities: np.ndarray, targets: np.ndarray, k: int = 3) -> float:
    """Share of rows whose target is among the k most probable labels."""
    best = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
    return float((best == targets[:, None]).any(axis=1).mean())


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
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--lr", type=float, default=MEASURED_RECIPE["lr"], help="encoder lr (TrainConfig default: 2e-5, the paper's)"
    )
    parser.add_argument("--head-lr", type=float, default=MEASURED_RECIPE["head_lr"], help="lr of the new layers")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--schedule", default=MEASURED_RECIPE["schedule"], choices=["constant", "linear", "cosine"])
    parser.add_argument(
        "--warmup", type=float, default=MEASURED_RECIPE["warmup_ratio"], help="share of the steps spent warming up"
    )
    parser.add_argument("--label-smoothing", type=float, default=MEASURED_RECIPE["label_smoothing"])
    parser.add_argument("--turn-weight-decay", type=float, default=0.5)
    parser.add_argument("--max-tokens", type=int, default=100)
    parser.add_argument(
        "--soft-weight",
        type=float,
        default=MEASURED_RECIPE["soft_target_weight"],
        help="share of the target from the 3 votes",
    )
    parser.add_argument(
        "--majority-only", action="store_true", help="leave the no-majority dialogues out of the training split"
    )
    parser.add_argument("--layer-lr-decay", type=float, default=1.0)
    parser.add_argument(
        "--ema-decay", type=float, default=MEASURED_RECIPE["ema_decay"], help="EMA of the weights (0 = off)"
    )
    parser.add_argument("--rdrop", type=float, default=0.0, help="R-Drop's KL weight (doubles the forward passes)")
    parser.add_argument("--limit", type=int, default=0, help="use only this many dialogues (0 = all)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13, help="the first training seed")
    parser.add_argument("--seeds", type=int, default=1, help="train this many seeds (seed, seed+1, ...)")
    parser.add_argument("--split-seed", type=int, default=13, help="the split's seed (fixes the test split)")
    parser.add_argument("--save", type=Path, default=None, help="keep each seed's model and scores here (resumable)")
    parser.add_argument(
        "--ensemble",
        action="store_true",
        help="with --save and --seeds N > 1: also score the average of the seeds' probabilities",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if not args.csv.exists():
        sys.exit(f"EDOS file not found: {args.csv}")
    import torch

    torch.set_num_threads(args.threads)
    wall_started = time.perf_counter()
    examples, no_majority = read_examples(args.csv)
    if args.limit:
        no_majority = no_majority[: round(len(no_majority) * args.limit / len(examples))]
        rng = np.random.default_rng(args.split_seed)
        examples = [examples[i] for i in rng.permutation(len(examples))[: args.limit]]
    train_set, validation, test = stratified_split(examples, args.split_seed)
    if not args.majority_only:
        train_set = train_set + no_majority
    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)
    print(f"examples: {len(examples)} (train {len(train_set)}, validation {len(validation)}, test {len(test)})")
    if not args.majority_only:
        print(f"the training split includes {len(no_majority)} dialogues with no majority (votes as targets)")
    runs = [_run_seed(args, seed, train_set, validation, test) for seed in range(args.seed, args.seed + args.seeds)]
    wall_s = time.perf_counter() - wall_started
    mean = {key: float(np.mean([run[key] for run in runs])) for key in runs[0]}
    line = (
        f"macro_f1={mean['macro_f1']:.4f} accuracy={mean['accuracy']:.4f} top3={mean['top3']:.4f} "
        f"train_s={mean['train_s']:.0f} wall_s={wall_s:.0f}"
    )
    if len(runs) > 1:
        spread = {key: float(np.std([run[key] for run in runs], ddof=1)) for key in ("macro_f1", "val_macro_f1")}
        print(
            f"{len(runs)} seeds: test macro-F1 {mean['macro_f1']:.4f} ± {spread['macro_f1']:.4f} (sd), "
            f"min {min(r['macro_f1'] for r in runs):.4f}, max {max(r['macro_f1'] for r in runs):.4f}; "
            f"validation macro-F1 {mean['val_macro_f1']:.4f} ± {spread['val_macro_f1']:.4f}"
        )
        line = line.replace(" top3=", f" macro_f1_sd={spread['macro_f1']:.4f} top3=")
    if args.ensemble:
        line += _ensemble(args, validation, test)
    print(line)


def _ensemble(args: argparse.Namespace, validation: list, test: list) -> str:
    """The seeds' saved classifiers averaged (probabilities): what distilling them into one model
    could reach at most. Scored like one seed; nothing is chosen by it."""
    from mlworkers.ml.classifier.dialogue_classifier import load_classifier

    if args.save is None or args.seeds < 2:
        sys.exit("--ensemble needs --save DIR and --seeds N > 1")
    seeds = range(args.seed, args.seed + args.seeds)
    models = [load_classifier(args.save / f"seed-{seed}", device=args.device, precision_name="fp32") for seed in seeds]
    figures = {}
    for name, split in (("validation", validation), ("test", test)):
        targets = np.array([LABEL_NAMES.index(example.label) for example in split])
        probabilities = np.mean([predict_proba(model, split) for model in models], axis=0)
        report = classification_report(targets, probabilities.argmax(axis=1), models[0].label_names)
        figures[name] = (report["macro_f1"], report["accuracy"], top_k_hit_rate(probabilities, targets))
        print(
            f"ensemble of {len(models)} seeds, {name}: macro-F1 {figures[name][0]:.4f}, "
            f"accuracy {figures[name][1]:.4f}, top-3 {figures[name][2]:.4f}"
        )
    macro_f1, accuracy, top3 = figures["test"]
    return f" ensemble_macro_f1={macro_f1:.4f} ensemble_accuracy={accuracy:.4f} ensemble_top3={top3:.4f}"


def _config(args: argparse.Namespace, seed: int) -> TrainConfig:
    return TrainConfig(
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
        soft_target_weight=args.soft_weight,
        layer_lr_decay=args.layer_lr_decay,
        ema_decay=args.ema_decay or None,
        rdrop_alpha=args.rdrop,
        seed=seed,
        device=args.device,
        num_threads=args.threads,
    )


# what may differ between runs that count as the same recipe: where and how fast it ran
_NOT_RECIPE = ("device", "num_threads")


def _recipe(config: TrainConfig, splits: dict) -> dict:
    values = {key: value for key, value in config.to_dict().items() if key not in _NOT_RECIPE}
    return {"config": values, "splits": splits}


def _fingerprint(examples: list[DialogueExample]) -> str:
    """The split's size and a digest of its dialogues, labels and votes, in order."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps([example.turns, example.label, list(example.votes or ())]).encode())
    return f"{len(examples)}:{digest.hexdigest()[:16]}"


def _saved_scores(args: argparse.Namespace, seed: int, recipe: dict) -> dict | None:
    """The scores a run with --save left for this seed, when its recipe and splits are this run's."""
    if args.save is None:
        return None
    path = args.save / f"seed-{seed}.json"
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    if saved.get("recipe") != recipe:
        print(f"seed {seed}: {path} holds another recipe or split; training again", flush=True)
        return None
    return saved["scores"]


def _run_seed(args: argparse.Namespace, seed: int, train_set: list, validation: list, test: list) -> dict:
    config = _config(args, seed)
    recipe = _recipe(
        config, {"train": _fingerprint(train_set), "validation": _fingerprint(validation), "test": _fingerprint(test)}
    )
    saved = _saved_scores(args, seed, recipe)
    if saved is not None:
        print(
            f"seed {seed}: read from {args.save / f'seed-{seed}.json'} (trained in {saved['train_s']:.0f} s): "
            f"test macro-F1 {saved['macro_f1']:.4f}, accuracy {saved['accuracy']:.4f}, top-3 {saved['top3']:.4f}; "
            f"validation macro-F1 {saved['val_macro_f1']:.4f}",
            flush=True,
        )
        return saved
    print(f"config: {config.to_dict()}", flush=True)
    started = time.perf_counter()
    clf = train(train_set, validation, list(LABEL_NAMES), config, progress=_print_progress(started))
    train_s = time.perf_counter() - started
    print(f"seed {seed}: best epoch (lowest validation loss): {clf.best_epoch}")
    scores = {"train_s": train_s}
    for name, split in (("validation", validation), ("test", test)):
        targets = np.array([LABEL_NAMES.index(example.label) for example in split])
        probabilities = predict_proba(clf, split)
        report = classification_report(targets, probabilities.argmax(axis=1), clf.label_names)
        top3 = top_k_hit_rate(probabilities, targets)
        print(
            f"seed {seed} {name}: macro-F1 {report['macro_f1']:.4f}, accuracy {report['accuracy']:.4f}, "
            f"top-3 {top3:.4f}, macro precision {report['macro_precision']:.4f}, "
            f"macro recall {report['macro_recall']:.4f}, {report['labels_scored']} labels, n={report['n']}"
        )
        prefix = "val_" if name == "validation" else ""
        scores.update({f"{prefix}macro_f1": report["macro_f1"], f"{prefix}accuracy": report["accuracy"]})
        scores[f"{prefix}top3"] = top3
    print(f"seed {seed}: training time {train_s:.0f} s on {args.device} with {args.threads} threads", flush=True)
    if args.save is not None:
        clf.save(args.save / f"seed-{seed}")
        record = {"recipe": recipe, "scores": scores, "device": args.device, "threads": args.threads}
        partial = args.save / f"seed-{seed}.json.partial"
        partial.write_text(json.dumps(record, indent=1))
        partial.replace(args.save / f"seed-{seed}.json")  # written whole or not at all
    return scores


def _print_progress(started: float):
    def progress(done: int, total: int, message: str) -> None:
        print(f"[{time.perf_counter() - started:7.0f}s] step {done}/{total} {message}", flush=True)

    return progress


if __name__ == "__main__":
    main()
