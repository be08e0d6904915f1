"""SBERT expansion at scale: threshold search of N unlabeled x G gold dialogue vectors.

    .venv/bin/python bench/expansion.py [--unlabeled 1000000] [--gold 10000] [--dim 384]
                                        [--methods faiss,chunked] [--threshold 0.92]

Writes N synthetic L2-normalised float32 vectors to a memmap in a temp dir (1M x 384 x 4 B =
1.5 GB on disk, never all in memory), G gold vectors in memory, 1 % of the unlabeled rows planted
next to a gold vector so there is something to find. Each method runs in a fresh subprocess and
reports wall time, rows/s and memory: the peak resident set (VmHWM, which counts the memmap pages
the search touched; the OS can drop those at will, so it is an upper bound) and the anonymous
memory at the end (RssAnon: what the search itself holds). `--data DIR` reuses vectors written by
an earlier run (`--keep DIR` writes them there). The methods must agree on every match. Ends with
one `key=value` line. Figures on a shared machine are noisy.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlworkers.ml.expansion.similarity import chunked_matches, faiss_matches

PLANTED_SHARE = 0.01


def make_data(folder: Path, unlabeled: int, gold: int, dim: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    gold_vectors = rng.standard_normal((gold, dim)).astype(np.float32)
    gold_vectors /= np.linalg.norm(gold_vectors, axis=1, keepdims=True)
    np.save(folder / "gold.npy", gold_vectors)
    out = np.lib.format.open_memmap(folder / "unlabeled.npy", mode="w+", dtype=np.float32, shape=(unlabeled, dim))
    chunk = 100_000
    for start in range(0, unlabeled, chunk):
        block = rng.standard_normal((min(chunk, unlabeled - start), dim)).astype(np.float32)
        planted = rng.random(len(block)) < PLANTED_SHARE
        near = gold_vectors[rng.integers(0, gold, planted.sum())]
        block[planted] = near + 0.02 * rng.standard_normal(near.shape).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + len(block)] = block
    out.flush()


def _status_mb(field: str) -> float:
    # /proc/self/status is per address space, so unlike ru_maxrss it does not inherit the parent's peak.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_one(folder: Path, method: str, threshold: float) -> dict:
    """In a fresh process: load, search, save the matches, report time and memory. Anonymous
    memory (not the memmap's file pages) is sampled every 20 ms while the search runs."""
    import threading

    anon_peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            anon_peak[0] = max(anon_peak[0], _status_mb("RssAnon"))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    unlabeled = np.load(folder / "unlabeled.npy", mmap_mode="r")
    gold = np.load(folder / "gold.npy")
    search = {"faiss": faiss_matches, "chunked": chunked_matches}[method]
    started = time.perf_counter()
    matches = search(unlabeled, gold, threshold)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    np.save(folder / f"matches-{method}.npy", matches.gold_index)
    return {
        "method": method,
        "seconds": seconds,
        "rows_per_s": len(unlabeled) / seconds,
        "matched": int((matches.gold_index >= 0).sum()),
        "peak_mb": _status_mb("VmHWM"),
        "anon_peak_mb": anon_peak[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unlabeled", type=int, default=1_000_000)
    parser.add_argument("--gold", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--threshold", type=float, default=0.92)
    parser.add_argument("--methods", default="faiss,chunked")
    parser.add_argument("--data", type=Path, help="reuse the vectors in this folder (from --keep)")
    parser.add_argument("--keep", type=Path, help="write the vectors to this folder and keep them")
    parser.add_argument("--child", nargs=2, metavar=("FOLDER", "METHOD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(Path(args.child[0]), args.child[1], args.threshold)))
        return
    if args.data or args.keep:
        folder = args.data or args.keep
        folder.mkdir(parents=True, exist_ok=True)
        run_all(args, folder, make=not args.data)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-expansion-") as tmp:
            run_all(args, Path(tmp), make=True)


def run_all(args, folder: Path, make: bool) -> None:
    started = time.perf_counter()
    if make:
        make_data(folder, args.unlabeled, args.gold, args.dim)
    unlabeled_shape = np.load(folder / "unlabeled.npy", mmap_mode="r").shape
    gold_count = len(np.load(folder / "gold.npy", mmap_mode="r"))
    size_gb = (folder / "unlabeled.npy").stat().st_size / 1e9
    print(f"data: {unlabeled_shape[0]:,} unlabeled x {gold_count:,} gold, {unlabeled_shape[1]}-d float32 "
          f"({size_gb:.2f} GB memmap), ready in {time.perf_counter() - started:.1f} s")  # fmt: skip
    print(f"cpus available: {len(os.sched_getaffinity(0))}; threshold {args.threshold}")
    results = {}
    for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
        command = [sys.executable, __file__, "--threshold", str(args.threshold), "--child", str(folder), method]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        results[method] = result
        print(f"{method:>8}: {result['seconds']:8.1f} s  {result['rows_per_s']:>10,.0f} rows/s  "
              f"peak RSS {result['peak_mb']:6.0f} MB (memmap pages included)  "
              f"peak anonymous {result['anon_peak_mb']:5.0f} MB  matched {result['matched']:,}")  # fmt: skip
    methods = list(results)
    agree = all(
        np.array_equal(np.load(folder / f"matches-{methods[0]}.npy"), np.load(folder / f"matches-{m}.npy"))
        for m in methods[1:]
    )
    print(f"methods agree on every match: {agree}")
    figures = " ".join(
        f"{m}_s={r['seconds']:.1f} {m}_peak_mb={r['peak_mb']:.0f} {m}_anon_peak_mb={r['anon_peak_mb']:.0f}"
        for m, r in results.items()
    )
    print(f"unlabeled={unlabeled_shape[0]} gold={gold_count} dim={unlabeled_shape[1]} {figures} "
          f"matched={results[methods[0]]['matched']} agree={agree}")  # fmt: skip


if __name__ == "__main__":
    main()
