"""SBERT expansion calibrated to its encoder, on the EDOS crowd gold.

    .venv/bin/python bench/expansion_calibration.py [--encoder minilm] [--cache DIR] [--limit N]
                                                    [--precision-margin 0.02] [--target-precision P]

Data: /work/shared/data/edos/MTurk_groundtruth_labels_9K.csv, read in place: the 8,913 dialogues
with a 2-of-3 majority among the 41 labels. Every turn is embedded with the encoder, each dialogue
is the half-decaying mean of its turns (last heaviest, `mlworkers.ml.expansion.embeddings`, as the expansion
job does); half the dialogues are seeds, half held out (seeded shuffle, `--split-seed`). For each
threshold: how many held-out dialogues have their nearest seed at or above it (coverage) and how
many of those take the right label (precision). The proposal is the lowest threshold whose
precision stays within `--precision-margin` of the precision at the paper's 0.92
(`mlworkers.ml.expansion.calibration`, the job's own code).

Then the margin rule (a match must beat the best seed of any other label by M) at equal coverage:
the precision of the same number of matches, the most similar ones that pass the margin, against
plain matching. `--cache DIR` keeps the dialogue vectors (`DIR/<encoder>.npy`) for a second run.

Prints one line per threshold, the margin comparison, and ends with one line:
encoder=<name> threshold=<t> precision=<p> coverage=<c> paper_threshold_coverage=<c>
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench/classifier_edos.py

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from classifier_edos import EDOS_CSV, read_majority_examples

from mlworkers.ml.expansion import calibration as calib
from mlworkers.ml.expansion.embeddings import dialogue_embeddings
from mlworkers.ml.expansion.similarity import PAPER_SBERT_THRESHOLD

MARGINS = (0.0, 0.01, 0.02, 0.03, 0.05)


def dialogue_vectors(dialogues: list[list[str]], encoder_name: str, cache: Path | None) -> np.ndarray:
    """One decayed, L2-normalised vector per dialogue (cached by encoder name and dialogue count)."""
    cached = cache / f"{encoder_name.replace('/', '_')}-{len(dialogues)}.npy" if cache else None
    if cached and cached.exists():
        print(f"dialogue vectors read from {cached}")
        return np.load(cached)
    from mlworkers.ml import loading

    encoder = loading.load_sentence_transformer(encoder_name, device=loading.pick_device("auto"))
    turns = [turn for dialogue in dialogues for turn in dialogue]
    started = time.perf_counter()
    turn_vectors = np.asarray(encoder.encode(turns, batch_size=128, convert_to_numpy=True), dtype=np.float32)
    print(f"embedded {len(turns):,} turns in {time.perf_counter() - started:.0f} s (a shared machine)")
    rows, start = [], 0
    for dialogue in dialogues:
        rows.append(list(range(start, start + len(dialogue))))
        start += len(dialogue)
    vectors = dialogue_embeddings(turn_vectors, rows)
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        np.save(cached, vectors)
    return vectors


def _figure(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def print_curve(calibration: calib.Calibration) -> None:
    print(f"seeds {calibration.seeds:,}, held out {calibration.held_out:,}; "
          f"a random pair shares a label {calibration.random_pair_agreement:.3f} of the time")  # fmt: skip
    for point in calibration.curve:
        print(f"threshold={point.threshold:.2f} matched={point.matched} correct={point.correct} "
              f"precision={_figure(point.precision)} coverage={point.coverage:.4f}")  # fmt: skip


def print_margins(nearest: calib.NearestGold, counts: dict[str, int]) -> None:
    """Precision at equal coverage: the same number of matches with and without each margin."""
    for name, count in counts.items():
        figures = " ".join(
            f"margin_{margin:.2f}={_figure(calib.precision_at_coverage(nearest, count, margin))}" for margin in MARGINS
        )
        print(f"equal coverage ({name}, {count} matches = {count / len(nearest.similarity):.4f}): {figures}")


def print_duplicates(examples, nearest: calib.NearestGold, seeds, held, vectors, at: float = 0.95) -> None:
    """How many of the closest matches are the same dialogue text as their seed, and how often
    those share its label: the ceiling the crowd's own disagreement puts on any threshold."""
    rows = np.flatnonzero(nearest.similarity >= np.float32(at))
    best = (vectors[held[rows]] @ vectors[seeds].T).argmax(axis=1) if len(rows) else []
    same = [examples[held[r]].turns == examples[seeds[b]].turns for r, b in zip(rows, best, strict=True)]
    agree = [bool(nearest.correct[r]) for r, s in zip(rows, same, strict=True) if s]
    print(f"matches at >= {at}: {len(rows)}, of which the same dialogue text as their seed: {sum(same)}, "
          f"and of those with the same label: {sum(agree)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="minilm", help="'minilm' (packaged), a local folder or a hub name")
    parser.add_argument("--data", type=Path, default=EDOS_CSV)
    parser.add_argument("--cache", type=Path, help="keep the dialogue vectors here")
    parser.add_argument("--limit", type=int, help="only the first N majority dialogues (a smoke run)")
    parser.add_argument("--split-seed", type=int, default=13)
    parser.add_argument("--precision-margin", type=float, default=calib.DEFAULT_PRECISION_MARGIN)
    parser.add_argument("--target-precision", type=float)
    args = parser.parse_args()
    examples = read_majority_examples(args.data)[: args.limit]
    labels = [example.label for example in examples]
    vectors = dialogue_vectors([list(example.turns) for example in examples], args.encoder, args.cache)
    calibration = calib.calibrate(
        args.encoder, vectors, labels, split_seed=args.split_seed,
        precision_margin=args.precision_margin, target_precision=args.target_precision,
    )  # fmt: skip
    print_curve(calibration)
    seeds, held = calib.split_halves(len(labels), args.split_seed)
    label_array = np.asarray(labels)
    nearest = calib.nearest_gold(vectors[held], label_array[held], vectors[seeds], label_array[seeds])
    print_duplicates(examples, nearest, seeds, held, vectors)
    proposal = calibration.proposal
    paper = calib.point_at(calibration.curve, PAPER_SBERT_THRESHOLD)
    print_margins(nearest, {"paper 0.92": paper.matched, f"proposed {proposal.threshold:.2f}": proposal.point.matched})
    print(f"proposal ({proposal.rule}, target precision {_figure(proposal.target_precision)}): "
          f"threshold {proposal.threshold:.2f}, precision {_figure(proposal.point.precision)}, "
          f"coverage {proposal.point.coverage:.4f} (paper's {PAPER_SBERT_THRESHOLD}: precision "
          f"{_figure(paper.precision)}, coverage {paper.coverage:.4f})")  # fmt: skip
    print(f"encoder={args.encoder} threshold={proposal.threshold:.2f} precision={_figure(proposal.point.precision)} "
          f"coverage={proposal.point.coverage:.4f} paper_threshold_coverage={paper.coverage:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
