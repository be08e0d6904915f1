"""Our dialogue classifier as one more rater on the EDOS crowd votes, cross-fitted.

Data: ../shared/data/edos/MTurk_groundtruth_labels_9K.csv, read in place (each row: a dialogue
and its three workers' answers; answers as given, a label typed through "Other" is its own
category, the paper's rule). The items are split into `--folds` folds (seeded); for each fold the
classifier (the project's training path, mlworkers.ml.classifier.dialogue_classifier.train, on the default
backbone, the packaged all-MiniLM-L6-v2, with the measured recipe: vote distributions as soft
targets, the no-majority rows as votes only) trains on the other folds and labels this one, so it
never rates an item it trained on. 10 % of the training folds are held out to pick the epoch.

What is compared (docs/benchmarks/model-rater.md):
- model_agreement: over the items whose three answers have a 2-of-3 majority, the share on which
  the model's label is that majority (the model as a fourth rater, the other answers' majority);
- worker_agreement: over every (item, worker) whose two OTHER workers agree, the share on which
  the worker gave their label (one worker against the majority of the other two);
- paired_model_agreement: the model in each such worker's seat, on the same (item, worker) pairs
  and against the same label: the like-for-like comparison with worker_agreement;
- model_kappa: Cohen's kappa between the model and the 2-of-3 majority.
All four computed by labeling.crowd.rater_agreement.seat_agreement (tested by hand).

    .venv/bin/python bench/model_rater.py --limit 3000 --epochs 1     # about 6 min on 2 shared cores
    .venv/bin/python bench/model_rater.py --epochs 1                  # every row: about 16 min there

Ends with one line:
rater=<name> items=<n> model_agreement=<x> worker_agreement=<x> model_kappa=<x> paired_model_agreement=<x>
worker_kappa=<x> folds=<k> epochs=<e> wall_s=<s>
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench/classifier_edos.py

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.taxonomy import LABEL_NAMES, canonical_label
from labeling.crowd.rater_agreement import seat_agreement
from labeling.services.importers.edos_format import EdosRow, read_edos
from mlworkers.ml.classifier.dialogue_classifier import MEASURED_RECIPE, predict_proba, train
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig

EDOS_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"


def example_of(row: EdosRow) -> DialogueExample:
    """The training example of a row: its 2-of-3 label when that is one of the 41, its votes."""
    votes = tuple(label for a in row.answers if not a.typed and (label := canonical_label(a.text)))
    label = canonical_label(row.agreed) if row.agreed and not row.agreed.endswith("(Other)") else None
    return DialogueExample(list(row.turns), label, votes)


def cross_fitted_labels(rows: list[EdosRow], args: argparse.Namespace) -> list[str]:
    """Each row's label from a classifier that did not train on the row's fold."""
    rng = np.random.default_rng(args.seed)
    fold_of = rng.permutation(len(rows)) % args.folds
    labels: list[str] = [""] * len(rows)
    for fold in range(args.folds):
        training = [example_of(rows[i]) for i in np.flatnonzero(fold_of != fold)]
        training = [e for e in training if e.label or e.votes]
        held = [e for e in training if e.label][: max(1, len(training) // 10)]
        held_ids = {id(e) for e in held}
        started = time.perf_counter()
        clf = train([e for e in training if id(e) not in held_ids], held, list(LABEL_NAMES), _config(args))
        rated = np.flatnonzero(fold_of == fold)
        probabilities = predict_proba(clf, [DialogueExample(list(rows[i].turns)) for i in rated])
        for i, best in zip(rated, probabilities.argmax(axis=1), strict=True):
            labels[i] = clf.label_names[best]
        print(f"fold {fold}: trained on {len(training)} in {time.perf_counter() - started:.0f} s, rated {len(rated)}")
    return labels


def _config(args: argparse.Namespace) -> TrainConfig:
    return TrainConfig(
        epochs=args.epochs,
        lr=MEASURED_RECIPE["lr"],
        head_lr=MEASURED_RECIPE["head_lr"],
        schedule=MEASURED_RECIPE["schedule"],
        warmup_ratio=MEASURED_RECIPE["warmup_ratio"],
        label_smoothing=MEASURED_RECIPE["label_smoothing"],
        soft_target_weight=MEASURED_RECIPE["soft_target_weight"],
        ema_decay=MEASURED_RECIPE["ema_decay"],
        seed=args.seed,
        device=args.device,
        num_threads=args.threads,
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=EDOS_CSV)
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of this many rows (0 = all)")
    parser.add_argument("--folds", type=int, default=2, help="cross-fitting folds (at least 2)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.folds < 2:
        parser.error("--folds must be at least 2")
    return args


def main() -> None:
    args = parse_args()
    if not args.csv.exists():
        sys.exit(f"EDOS file not found: {args.csv}")
    started = time.perf_counter()
    rows = read_edos(args.csv.read_text(encoding="utf-8-sig"), str(args.csv))
    if args.limit:
        keep = np.sort(np.random.default_rng(args.seed).permutation(len(rows))[: args.limit])
        rows = [rows[i] for i in keep]
    model = cross_fitted_labels(rows, args)
    figures = seat_agreement([[a.raw for a in row.answers] for row in rows], model)  # answers as given
    print(
        f"{figures.majority_items} items with a 2-of-3 majority; {figures.worker_pairs} (item, worker) pairs "
        "whose other two workers agree"
    )
    print(
        f"rater=minilm-crossfit items={len(rows)} model_agreement={figures.model_agreement:.4f} "
        f"worker_agreement={figures.worker_agreement:.4f} model_kappa={figures.model_kappa:.4f} "
        f"paired_model_agreement={figures.paired_model_agreement:.4f} worker_kappa={figures.worker_kappa:.4f} "
        f"folds={args.folds} epochs={args.epochs} wall_s={time.perf_counter() - started:.0f}"
    )


if __name__ == "__main__":
    main()
