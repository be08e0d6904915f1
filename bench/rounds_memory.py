"""Self-labeling rounds vs corpus size: peak memory and the fastText model's size.

    .venv/bin/python bench/rounds_memory.py [--sizes 5000,20000,80000] [--gold 1000] [--legacy]

Runs `mlworkers.ml.rounds.self_labeling.run_rounds` (the same orchestration `self_label_rounds` runs) on a
synthetic corpus: `--gold` labeled training dialogues over the 41 labels, a test split of a third
of that, and N unlabeled dialogues, each three turns of words drawn from a shared Zipf vocabulary
plus two cue words of its label. The unlabeled dialogues are a Pool that makes each dialogue's
text from its key on request (as the job reads them from the database), and the dialogue vectors
are made per key too (1 % planted next to a gold dialogue, so the SBERT rounds find something).
The learner is the fastText baseline (it drives self-labeling); the dialogue classifier is left
out: MiniLM and its batches are the same size whatever the corpus.

Each size runs in a fresh subprocess and reports wall time, the peak RSS over the rounds
(`mlworkers.ml.memory.PeakMemory`: VmHWM reset at the start), the training-set size of the last
round and the saved fastText model (bucket count and bytes). `--legacy` also runs each size the
way the job did before: every unlabeled dialogue's text and vector in memory at once, fastText
with its default 2,000,000 buckets. Ends with one `key=value` line for the largest size.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotation.taxonomy import LABEL_NAMES
from mlworkers.ml.memory import PeakMemory
from mlworkers.ml.rounds import fasttext_baseline as ft
from mlworkers.ml.rounds import self_labeling as rounds

DIM = 384
VOCABULARY = 20_000
PLANTED_SHARE = 0.01


def _rng(key: int, salt: int) -> np.random.Generator:
    return np.random.default_rng((key, salt))


def label_of(key: int) -> str:
    return LABEL_NAMES[key % len(LABEL_NAMES)]


def turns_of(key: int) -> tuple[str, ...]:
    rng, label = _rng(key, 1), label_of(key).lower()
    turns = []
    for _ in range(3):
        words = [f"w{min(int(w), VOCABULARY)}" for w in rng.zipf(1.3, size=int(rng.integers(5, 12)))]
        for slot in rng.choice(len(words), size=2, replace=False):
            words[int(slot)] = f"{label}{int(rng.integers(0, 4))}"
        turns.append(" ".join(words))
    return tuple(turns)


class SyntheticCorpus:
    """Keys 0..gold-1 labeled, then the test keys, then the unlabeled ones."""

    def __init__(self, gold: int, unlabeled: int):
        self.gold, self.test = gold, max(len(LABEL_NAMES), gold // 3)
        self.first_unlabeled = gold + self.test
        self.unlabeled = unlabeled

    def labeled(self, start: int, count: int) -> list[rounds.Item]:
        return [rounds.Item(k, turns_of(k), label_of(k)) for k in range(start, start + count)]

    def vectors(self, keys) -> np.ndarray:
        out = np.empty((len(keys), DIM), dtype=np.float32)
        for row, key in enumerate(keys):
            rng = _rng(int(key), 2)
            if key >= self.first_unlabeled and rng.random() < PLANTED_SHARE:
                source = int(rng.integers(0, self.gold))
                out[row] = _rng(source, 2).standard_normal(DIM) + 0.02 * rng.standard_normal(DIM)
            else:
                out[row] = rng.standard_normal(DIM)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class KeyPool:
    """Texts made from the key on request: nothing of the corpus is held but its keys."""

    def __init__(self, keys: np.ndarray):
        self.keys = keys

    def all_keys(self) -> np.ndarray:
        return self.keys

    def read(self, keys) -> list[rounds.Item]:
        return [rounds.Item(int(k), turns_of(int(k))) for k in keys]


def fasttext_learner(bucket: int | None) -> rounds.Learner:
    config = ft.FastTextConfig(bucket=bucket)
    return rounds.Learner(
        name="fasttext",
        train=lambda items: ft.train_fasttext([i.turns for i in items], [i.label for i in items], LABEL_NAMES, config),
        predict_proba=lambda model, items: model.predict_proba([i.turns for i in items]),
    )


def run_one(unlabeled: int, gold: int, legacy: bool) -> dict:
    corpus = SyntheticCorpus(gold, unlabeled)
    keys = np.arange(corpus.first_unlabeled, corpus.first_unlabeled + unlabeled, dtype=np.int64)
    config = rounds.RoundsConfig(label_names=list(LABEL_NAMES), self_per_label=100, self_min_confidence=0.9)
    if legacy:  # before: every unlabeled text and vector at once, fastText's default buckets
        pool, config = [rounds.Item(int(k), turns_of(int(k))) for k in keys], replace(config, chunk_size=10**9)
        bucket = ft.FASTTEXT_DEFAULT_BUCKETS
    else:
        pool, bucket = KeyPool(keys), None
    started = time.perf_counter()
    with PeakMemory() as peak:
        outcome = rounds.run_rounds(
            corpus.labeled(0, gold),
            corpus.labeled(gold, corpus.test),
            pool,
            [fasttext_learner(bucket)],
            rounds.vector_expander(corpus.vectors),
            config,
        )
    wall = time.perf_counter() - started
    model = outcome.models["fasttext"]
    with tempfile.TemporaryDirectory() as folder:
        model_bytes = (model.save(folder) / "fasttext.bin").stat().st_size
    return {
        "unlabeled": unlabeled,
        "legacy": legacy,
        "wall_s": round(wall, 1),
        "peak_rss_mb": peak.megabytes,
        "peak_rss_method": peak.method,
        "training_size": outcome.rounds[-1].training_size,
        "bucket": model.config.bucket,
        "model_mb": round(model_bytes / 2**20, 2),
        "macro_f1": round(outcome.rounds[-1].scores["fasttext"]["macro_f1"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,20000,80000", help="unlabeled dialogues, comma-separated")
    parser.add_argument("--gold", type=int, default=1000, help="labeled training dialogues")
    parser.add_argument("--legacy", action="store_true", help="also run each size the old way")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: "size,legacy" in a subprocess
    args = parser.parse_args()
    if args.one:
        size, legacy = args.one.split(",")
        print(json.dumps(run_one(int(size), args.gold, legacy == "1")))
        return
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        for legacy in [False, True] if args.legacy else [False]:
            command = [sys.executable, __file__, "--gold", str(args.gold), "--one", f"{size},{int(legacy)}"]
            output = subprocess.run(command, check=True, capture_output=True, text=True, env=os.environ).stdout
            result = json.loads(output.strip().splitlines()[-1])
            results.append(result)
            print(
                f"unlabeled={size:>7} {'legacy' if legacy else 'now   '} wall_s={result['wall_s']:>6} "
                f"peak_rss_mb={result['peak_rss_mb']:>7} training={result['training_size']:>5} "
                f"bucket={result['bucket']:>8} model_mb={result['model_mb']:>7} macro_f1={result['macro_f1']}",
                flush=True,
            )
    now = [r for r in results if not r["legacy"]]
    largest, smallest = now[-1], now[0]
    print(
        f"unlabeled={largest['unlabeled']} peak_rss_mb={largest['peak_rss_mb']} "
        f"peak_rss_growth_mb={round(largest['peak_rss_mb'] - smallest['peak_rss_mb'], 1)} "
        f"model_mb={largest['model_mb']} bucket={largest['bucket']}"
    )


if __name__ == "__main__":
    main()
