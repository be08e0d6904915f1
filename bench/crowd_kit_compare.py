"""Our Dawid-Skene against crowd-kit's MACE, GLAD and Dawid-Skene, on the EDOS votes and a simulated crowd.

    nice -n 19 .venv/bin/python bench/crowd_kit_compare.py [--file PATH] [--sim-items 5000] [--methods a,b]

EDOS (`../shared/data/edos/MTurk_groundtruth_labels_9K.csv`, read in place) publishes no worker ids,
only the answer's position (worker 1, 2, 3): each position stands for one "worker", so a method that
models workers models three mixtures of people. Each method's label is compared with the 2-of-3
majority on the dialogues that have one (`edos_agreement`).

The simulated crowd has real worker identities and a known truth: items with a true label drawn
from EDOS's majority-label frequencies, answered by three of the demo's six simulated workers
(`labeling.platforms.simulated_crowd.DEFAULT_CROWD`, the spammer included, clicking one of three suggestions),
the same workers across items, so a worker model can learn who to trust (`sim_accuracy`, against
the truth). Time is wall time of the fit on this machine.

One line per method, then a final key=value line.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_FILE = ROOT.parent / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"

from adaptive_replay import read_items, setup_django  # beside this file: the EDOS reading, Django's setup

from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.majority import majority_vote


def edos_triples(path: Path) -> tuple[list[tuple[int, str, str]], dict[int, str]]:
    items, _ = read_items(path)
    triples = [(i, f"position-{p}", answer) for i, item in enumerate(items) for p, answer in enumerate(item.answers, 1)]
    winners = {i: majority_vote(item.answers).label for i, item in enumerate(items)}
    return triples, {i: label for i, label in winners.items() if label}


def simulated_triples(labels: list[str], weights: list[float], items: int, seed: int):
    """The demo's simulated workers (labeling.platforms.simulated_crowd's profiles and choose_answer)."""
    from labeling.platforms.simulated_crowd import DEFAULT_CROWD, Truth, choose_answer

    rng = random.Random(seed)
    triples, truth = [], {}
    for item in range(items):
        truth[item] = rng.choices(labels, weights)[0]
        suggestions = [truth[item]] + rng.sample([label for label in labels if label != truth[item]], 2)
        for profile in rng.sample(DEFAULT_CROWD, 3):
            shown = rng.sample(suggestions, 3)
            triples.append((item, profile.username, choose_answer(profile, Truth(truth[item]), shown, labels, rng)))
    return triples, truth


def methods():
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore", pd.errors.PerformanceWarning)  # crowd-kit's GLAD inserts columns one by one
    from crowdkit.aggregation import GLAD, MACE, DawidSkene

    def ours(triples):
        return dawid_skene(triples).labels

    def kit(model):
        def run(triples):
            frame = pd.DataFrame(triples, columns=["task", "worker", "label"])
            return model().fit_predict(frame).to_dict()

        return run

    return {
        "ours_dawid_skene": ours,
        "crowdkit_dawid_skene": kit(lambda: DawidSkene(n_iter=30)),
        "crowdkit_mace": kit(lambda: MACE(n_iter=50, random_state=0)),
        "crowdkit_glad": kit(lambda: GLAD(n_iter=30)),
        "majority_vote": lambda triples: _majority(triples),
    }


def _majority(triples):
    by_item: dict = {}
    for item, _, answer in triples:
        by_item.setdefault(item, []).append(answer)
    return {item: Counter(answers).most_common(1)[0][0] for item, answers in by_item.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--sim-items", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--methods", default="", help="comma-separated method names to run (default: all; MACE alone takes an hour)"
    )
    args = parser.parse_args()
    chosen = methods()
    if args.methods:
        unknown = set(args.methods.split(",")) - set(chosen)
        if unknown:
            sys.exit(f"unknown method(s) {', '.join(sorted(unknown))}; known: {', '.join(chosen)}")
        chosen = {name: run for name, run in chosen.items() if name in args.methods.split(",")}
    if not args.file.exists():
        sys.exit(f"no crowd file at {args.file}")
    setup_django()
    edos, majority = edos_triples(args.file)
    frequencies = Counter(majority.values())
    simulated, truth = simulated_triples(list(frequencies), list(frequencies.values()), args.sim_items, args.seed)
    best = None
    for name, run in chosen.items():
        started = time.perf_counter()
        edos_labels = run(edos)
        edos_seconds = time.perf_counter() - started
        sim_labels = run(simulated)
        edos_agreement = sum(edos_labels.get(item) == label for item, label in majority.items()) / len(majority)
        sim_accuracy = sum(sim_labels.get(item) == label for item, label in truth.items()) / len(truth)
        print(
            f"method={name} edos_agreement={edos_agreement:.4f} sim_accuracy={sim_accuracy:.4f} "
            f"edos_seconds={edos_seconds:.2f}"
        )
        if best is None or sim_accuracy > best[1]:
            best = (name, sim_accuracy)
    print(f"best_sim_method={best[0]} best_sim_accuracy={best[1]:.4f}")


if __name__ == "__main__":
    main()
