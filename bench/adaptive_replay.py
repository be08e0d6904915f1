"""Redundancy policies replayed on the real EDOS votes, and on a simulated crowd with known truth.

    nice -n 19 .venv/bin/python bench/adaptive_replay.py [--file PATH] [--folds 5] [--cache bench/out/edos-emb.npz]

EDOS (`../shared/data/edos/MTurk_groundtruth_labels_9K.csv`, read in place): 10,245 dialogues, each
with its three workers' answers in the order they were recorded. Each policy of
`labeling.crowd.redundancy` buys those answers one at a time, in order, until it is done:
- `fixed`: three answers (the paper);
- `until_agreement`: two, a third only where the first two disagree (cap 3: EDOS has no more);
- `model_informed`: one answer where the suggestion model's calibrated top probability reaches a
  threshold and the worker picks that top label; otherwise as `until_agreement`.

The model's probabilities are cross-fitted: the dialogues are cut into `--folds` folds; for each
fold, a logistic regression over frozen MiniLM embeddings (the last turn and the half-decaying
dialogue embedding) is trained on the other folds' majority labels, its temperature fitted on a
held-out fifth of them, and it scores only its own fold, so no dialogue is scored by a model that
saw it. The threshold of each fold is the lowest one whose replay on the OTHER folds keeps
gold_agreement >= --target (validation folds); the fold's figures use it.

The simulated crowd: items with a known true label drawn from EDOS's majority-label frequencies,
seats filled by the demo's simulated workers (`labeling.platforms.simulated_crowd.DEFAULT_CROWD`, the spammer
included: it clicks the first of the three suggestions in a random order), and a model whose top
label is right with the probability it states (calibrated), its confidences drawn from the EDOS
cross-fitted ones. sim_accuracy is the share of items whose gold equals the truth.

One line per policy: `policy= answers_ratio= gold_agreement= gold_coverage= sim_accuracy=` where
answers_ratio is the answers bought over three per dialogue, gold_agreement the share of the
dialogues with a 3-answer majority whose gold is that majority, gold_coverage the share with any
gold; then a final key=value line.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_FILE = ROOT.parent / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"

from labeling.crowd.majority import majority_vote, normalise_answer
from labeling.crowd.redundancy import RedundancyPolicy, replay
from labeling.services.importers.edos_format import read_edos

THRESHOLDS = [round(0.50 + 0.01 * step, 2) for step in range(50)]


@dataclass(frozen=True)
class Item:
    answers: list[str]  # in recorded order, normalised
    top: str | None = None  # the model's top label
    confidence: float | None = None  # its calibrated probability


def read_items(path: Path) -> tuple[list[Item], list]:
    rows = read_edos(path.read_text(encoding="utf-8"), str(path))
    return [Item([normalise_answer(answer.text) for answer in row.answers]) for row in rows], rows


def policy_figures(policy: RedundancyPolicy, items: list[Item]) -> dict[str, float]:
    bought = agreeing = with_majority = covered = 0
    for item in items:
        outcome = replay(policy, item.answers, item.top, item.confidence)
        bought += outcome.answers_used
        covered += outcome.gold is not None
        full = majority_vote(item.answers).label
        if full is not None:
            with_majority += 1
            agreeing += outcome.gold == full
    return {
        "answers_ratio": bought / (3 * len(items)),
        "gold_agreement": agreeing / with_majority if with_majority else float("nan"),
        "gold_coverage": covered / len(items),
    }


# -- the cross-fitted model --------------------------------------------------------------------------


def embed(rows, cache: Path | None) -> np.ndarray:
    if cache and cache.exists():
        return np.load(cache)["features"]
    from mlworkers.ml.expansion.embeddings import dialogue_embedding
    from mlworkers.ml.loading import PACKAGED_MINILM, load_sentence_transformer

    model = load_sentence_transformer(PACKAGED_MINILM)
    turns = [turn for row in rows for turn in row.turns]
    vectors = model.encode(turns, batch_size=128, normalize_embeddings=True, show_progress_bar=False)
    features, start = [], 0
    for row in rows:
        own = vectors[start : start + len(row.turns)]
        start += len(row.turns)
        features.append(np.concatenate([own[-1], dialogue_embedding(own)]))
    features = np.asarray(features, dtype=np.float32)
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, features=features)
    return features


def cross_fit(features: np.ndarray, items: list[Item], folds: int, seed: int) -> tuple[list[Item], np.ndarray]:
    """Every item gets the top label and calibrated confidence of a model that never saw it."""
    from sklearn.linear_model import LogisticRegression

    gold = [majority_vote(item.answers).label for item in items]
    fold_of = np.random.default_rng(seed).integers(0, folds, size=len(items))
    scored = list(items)
    for fold in range(folds):
        train = [i for i in range(len(items)) if fold_of[i] != fold and gold[i] is not None]
        random.Random(seed + fold).shuffle(train)
        held = train[: len(train) // 5]
        fit = train[len(train) // 5 :]
        model = LogisticRegression(max_iter=300, C=2.0)
        model.fit(features[fit], [gold[i] for i in fit])
        temperature = _temperature(model, features[held], [gold[i] for i in held])
        own = np.flatnonzero(fold_of == fold)
        probabilities = _softmax(model.decision_function(features[own]) / temperature)
        for position, index in enumerate(own):
            best = int(probabilities[position].argmax())
            scored[index] = Item(items[index].answers, str(model.classes_[best]), float(probabilities[position, best]))
    return scored, fold_of


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _temperature(model, features: np.ndarray, labels: list[str]) -> float:
    logits = model.decision_function(features)
    index = {label: k for k, label in enumerate(model.classes_)}
    known = [k for k, label in enumerate(labels) if label in index]
    targets = np.array([index[labels[k]] for k in known])
    best, best_loss = 1.0, float("inf")
    for temperature in np.linspace(0.5, 3.0, 26):
        probabilities = _softmax(logits[known] / temperature)
        loss = -np.log(probabilities[np.arange(len(known)), targets] + 1e-12).mean()
        if loss < best_loss:
            best, best_loss = float(temperature), loss
    return best


def model_informed_by_fold(items: list[Item], fold_of: np.ndarray, folds: int, target: float) -> tuple[dict, list]:
    """Each fold replayed with the threshold chosen on the other folds."""
    chosen, outcomes = [], []
    for fold in range(folds):
        others = [item for item, f in zip(items, fold_of, strict=True) if f != fold]
        threshold = next(
            (t for t in THRESHOLDS if policy_figures(_model_policy(t), others)["gold_agreement"] >= target), 1.0
        )
        chosen.append(threshold)
        own = [item for item, f in zip(items, fold_of, strict=True) if f == fold]
        outcomes.append((len(own), policy_figures(_model_policy(threshold), own)))
    total = sum(count for count, _ in outcomes)
    merged = {key: sum(count * figures[key] for count, figures in outcomes) / total for key in outcomes[0][1]}
    return merged, chosen


def _model_policy(threshold: float) -> RedundancyPolicy:
    return RedundancyPolicy("model_informed", cap=3, threshold=threshold)


# -- the simulated crowd -----------------------------------------------------------------------------


def simulate(
    policy: RedundancyPolicy, labels: list[str], weights: list[float], confidences: np.ndarray, seed: int, n: int
) -> float:
    """The demo's simulated workers (labeling.platforms.simulated_crowd: their profiles and choose_answer), each
    shown the three suggestions in an order drawn per screen."""
    from labeling.platforms.simulated_crowd import DEFAULT_CROWD, Truth, choose_answer

    rng = random.Random(seed)
    right = 0
    for _ in range(n):
        truth = rng.choices(labels, weights)[0]
        confidence = float(confidences[rng.randrange(len(confidences))])
        top = truth if rng.random() < confidence else rng.choice([label for label in labels if label != truth])
        suggestions = [top] + rng.sample([label for label in labels if label != top], 2)
        workers = rng.sample(DEFAULT_CROWD, len(DEFAULT_CROWD))
        answers = [choose_answer(profile, Truth(truth), rng.sample(suggestions, 3), labels, rng) for profile in workers]
        right += replay(policy, answers, top, confidence).gold == truth
    return right / n


def setup_django() -> None:
    """Django on a throw-away SQLite file: the simulated crowd's module imports the models."""
    import tempfile

    workdir = tempfile.mkdtemp(prefix="adaptive-replay-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.975, help="gold_agreement the threshold must keep")
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "out" / "edos-replay-features.npz")
    parser.add_argument("--sim-items", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if not args.file.exists():
        sys.exit(f"no crowd file at {args.file}")
    started = time.perf_counter()
    setup_django()
    items, rows = read_items(args.file)
    features = embed(rows, args.cache)
    scored, fold_of = cross_fit(features, items, args.folds, args.seed)
    frequencies = Counter(label for item in items if (label := majority_vote(item.answers).label))
    labels, weights = list(frequencies), list(frequencies.values())
    confidences = np.array([item.confidence for item in scored])
    figures = {
        "fixed": (policy_figures(RedundancyPolicy("fixed"), scored), RedundancyPolicy("fixed")),
        "until_agreement": (
            policy_figures(RedundancyPolicy("until_agreement"), scored),
            RedundancyPolicy("until_agreement"),
        ),
    }
    informed, thresholds = model_informed_by_fold(scored, fold_of, args.folds, args.target)
    figures["model_informed"] = (informed, _model_policy(float(np.median(thresholds))))
    print(f"dialogues={len(items)} folds={args.folds} thresholds_by_fold={','.join(f'{t:.2f}' for t in thresholds)}")
    for name, (edos, policy) in figures.items():
        sim = simulate(policy, labels, weights, confidences, args.seed, args.sim_items)
        print(
            f"policy={name} answers_ratio={edos['answers_ratio']:.3f} gold_agreement={edos['gold_agreement']:.3f} "
            f"gold_coverage={edos['gold_coverage']:.3f} sim_accuracy={sim:.3f}"
        )
    print(f"model_informed_threshold={np.median(thresholds):.2f} wall_s={time.perf_counter() - started:.0f}")


if __name__ == "__main__":
    main()
