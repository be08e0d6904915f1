"""Turns per second of our bulk-annotation inference path on the CPU, beside a naive
`transformers` text-classification pipeline over the same encoder weights and the same turns.

Ours: each dialogue's turns tokenized once, every turn's input built (target first, history
reversed, 100 tokens), inputs sorted by length and batched, padding per batch only,
`torch.inference_mode()`, top-5 labels per turn, streamed in chunks. Naive: the same input text
(target and reversed history joined by [SEP]) through `pipeline("text-classification")` in corpus
order with the same batch size. The turns are synthetic (generated here, not EDOS sentences).
Peak RSS is printed after a small and a 4x larger corpus: flat memory means it does not grow.

    .venv/bin/python bench/inference.py [--turns 2000] [--batch-size 64] [--threads 2]
        [--device cpu|cuda] [--precision auto|fp32|bf16|fp16|int8] [--skip-naive] [--progress-every 100000]

`--precision auto` (the default) is the precision bulk annotation runs in with ML_PRECISION unset:
on a CPU, fp32 or int8, whichever mlworkers.ml.classifier.cpu_precision measures faster on this machine (the
line "auto on this CPU" says which and why), so the default `ratio=` compares the default CPU path
with the naive pipeline (which stays stock fp32). int8 quantizes the
encoder's linear layers (mlworkers/ml/classifier/quantize.py); int8 on a GPU runs the GPU's own precision (as
the job does). The last line names the precision measured.

`--turns 2830000 --skip-naive` is the paper's corpus size (1M dialogues): it reports the time and
peak memory of labeling it (streamed in chunks; sensible on a GPU, 1.5 hours or more on 2 CPU
cores), with a progress line (turns so far, turns/s, peak RSS) every --progress-every turns.
The breakdown times each stage of our path run one after the other (tokenize = one fast-tokenizer
call per chunk plus building every turn's input; forward = the model; top-k = softmax and
`torch.topk` on the device and the copy back; write = formatting the rows bulk annotation COPYs,
the database itself excluded). In the job the stages overlap (see mlworkers/classifier/bulk.py).

Ends with one line: ratio=<ours/naive> turns_per_s=<ours> tokenize_s= forward_s= topk_s= write_s= precision=
"""

import os

# Spinning OpenMP threads on a shared CPU slow everything down many times; wait passively.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.taxonomy import LABEL_NAMES
from mlworkers.ml import loading
from mlworkers.ml.classifier import cpu_precision, inference, precision, quantize
from mlworkers.ml.classifier.dialogue_classifier import build_classifier
from mlworkers.ml.classifier.model import TrainConfig

_VOCABULARY = (
    "I you we they he she it the a an this that there here what why where when how who "
    "is are was were be been have has had do did does can could will would should must "
    "go come leave stay wait look listen tell ask know think want need love hate miss find "
    "night morning door car train station boat river house room window money letter phone "
    "father mother brother sister friend captain doctor boss kid baby man woman "
    "now then never always again maybe really just only still already soon late "
    "good bad fine sorry okay yes no please right wrong sure afraid happy tired cold "
    "to of in on at for with from about over under after before into out up down"
)
WORDS = _VOCABULARY.split()
ENDINGS = [".", "?", "!", "...", "."]


def synthetic_dialogues(n_turns: int, seed: int, mean_turns: float = 2.5) -> Iterator[list[str]]:
    """Dialogues of 1 + Poisson(mean_turns - 1) turns (2.5 by default, near the EDOS dialogues'
    2.3), sentences of one word to 60 (lognormal, median 7 words, like subtitle lines), lazily."""
    rng = np.random.default_rng(seed)
    produced = 0
    while produced < n_turns:
        size = min(1 + min(int(rng.poisson(mean_turns - 1)), 11), n_turns - produced)
        turns = []
        for _ in range(size):
            length = int(np.clip(rng.lognormal(mean=2.0, sigma=0.7), 1, 60))
            words = rng.choice(WORDS, size=length)
            turns.append(" ".join(words).capitalize() + str(rng.choice(ENDINGS)))
        produced += size
        yield turns


class Stages:
    """Seconds spent in each stage of our path."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(("tokenize", "forward", "topk", "write"), 0.0)

    def add(self, name: str, since: float, device: torch.device) -> float:
        if device.type == "cuda":
            torch.cuda.synchronize()
        now = time.perf_counter()
        self.seconds[name] += now - since
        return now


def ours(
    clf,
    dialogues: Iterator[list[str]],
    chunk_size: int,
    batch_size: int,
    stages: Stages | None = None,
    progress_every: int = 0,
) -> int:
    """The bulk-annotation path without the database: a chunk of whole dialogues tokenized in one
    call, inputs length-sorted and batched, softmax + top-5 on the device, rows formatted. With
    `progress_every`, a line after each that many turns (turns so far, rate, peak RSS)."""
    stages = stages or Stages()
    labeled, chunk, size = 0, [], 0
    started, reported = time.perf_counter(), 0
    for turns in dialogues:
        chunk.append(turns)
        size += len(turns)
        if size >= chunk_size:
            labeled += _label_chunk(clf, chunk, batch_size, stages)
            chunk, size = [], 0
            if progress_every and labeled - reported >= progress_every:
                reported = labeled
                elapsed = time.perf_counter() - started
                print(
                    f"progress: {labeled} turns in {elapsed:.0f} s, {labeled / elapsed:.1f} turns/s, "
                    f"peak RSS {peak_rss_mb():.0f} MB",
                    flush=True,
                )
    if chunk:
        labeled += _label_chunk(clf, chunk, batch_size, stages)
    return labeled


def _label_chunk(clf, dialogues: list[list[str]], batch_size: int, stages: Stages) -> int:
    device = clf.device
    tick = time.perf_counter()
    encoded = [
        item for items in inference.encode_dialogues(dialogues, clf.tokenizer, clf.config.max_tokens) for item in items
    ]
    tick = stages.add("tokenize", tick, device)
    pad_id, decay = clf.tokenizer.pad_token_id or 0, clf.config.turn_weight_decay
    top_indices = np.empty((len(encoded), 5), dtype=np.int64)
    top_values = np.empty((len(encoded), 5), dtype=np.float32)
    with torch.inference_mode():
        for rows in inference.length_sorted_batches([len(ids) for ids, _ in encoded], batch_size):
            batch = inference.collate([encoded[i] for i in rows], pad_id, decay, inference.PAD_MULTIPLE)
            logits = clf.model(**{name: tensor.to(device, non_blocking=True) for name, tensor in batch.items()})
            tick = stages.add("forward", tick, device)
            best = torch.topk(torch.softmax(logits.float(), dim=-1), 5, dim=-1)
            top_values[rows], top_indices[rows] = best.values.cpu().numpy(), best.indices.cpu().numpy()
            tick = stages.add("topk", tick, device)
    names = clf.label_names
    payload = [
        json.dumps([[names[i], round(p, 6)] for i, p in zip(best, values, strict=True)])
        for best, values in zip(top_indices.tolist(), top_values.tolist(), strict=True)
    ]
    stages.add("write", tick, device)
    return len(payload)


def naive_inputs(dialogues: Iterator[list[str]]) -> list[str]:
    texts = []
    for turns in dialogues:
        for end in range(len(turns)):
            texts.append(" [SEP] ".join(reversed(turns[: end + 1])))
    return texts


def naive_pipeline(device: torch.device):
    """The same MiniLM weights under a sequence-classification head, in a stock pipeline."""
    from transformers import AutoModelForSequenceClassification, pipeline

    path = loading.resolve_model_path("minilm")
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=len(LABEL_NAMES))
    return pipeline("text-classification", model=model, tokenizer=loading.load_tokenizer("minilm"), device=device)


def naive(classifier, texts: list[str], batch_size: int) -> int:
    outputs = classifier(texts, batch_size=batch_size, truncation=True, max_length=100, top_k=5)
    return len(outputs)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000, help="turns in the speed comparison")
    parser.add_argument("--memory-turns", type=int, default=2000, help="small corpus of the memory check (x4 after)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--chunk-size", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mean-turns", type=float, default=2.5, help="mean turns per synthetic dialogue")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--precision", default="auto", choices=precision.PRECISIONS)
    parser.add_argument("--skip-naive", action="store_true", help="only our path (the paper-size run)")
    parser.add_argument(
        "--progress-every", type=int, default=100_000, help="a progress line after each N turns (0: none)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    clf = build_classifier(list(LABEL_NAMES), TrainConfig(device=args.device))
    chosen = precision.inference_precision(args.precision, clf.device)
    if chosen == precision.CPU_AUTO:  # "auto" on a CPU: whichever of fp32 and int8 measures faster here
        choice = cpu_precision.choose(clf)
        print(f"auto on this CPU: {choice.summary()}")
        chosen = choice.precision
    if chosen == "int8":
        quantize.quantize_classifier(clf)
    else:
        clf.model.to(dtype=precision.dtype_of(chosen)).eval()
    device_name = (
        torch.cuda.get_device_name(clf.device) if clf.device.type == "cuda" else f"CPU, {args.threads} threads"
    )
    print(
        f"model: packaged MiniLM on {device_name}, {chosen}, batch {args.batch_size}, chunk {args.chunk_size}, "
        f"{args.turns} synthetic turns in dialogues of {args.mean_turns} turns on average"
    )
    ours(clf, synthetic_dialogues(2 * args.batch_size, seed=99), args.chunk_size, args.batch_size)  # warm-up

    stages = Stages()
    started = time.perf_counter()
    done = ours(
        clf,
        synthetic_dialogues(args.turns, args.seed, args.mean_turns),
        args.chunk_size,
        args.batch_size,
        stages,
        args.progress_every,
    )
    elapsed = time.perf_counter() - started
    ours_rate = done / elapsed
    print(f"ours:  {done} turns in {elapsed:.1f} s, {ours_rate:.1f} turns/s, peak RSS {peak_rss_mb():.0f} MB")
    if clf.device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(clf.device) / 2**20:.0f} MB")
    breakdown = " ".join(f"{name}_s={seconds:.2f}" for name, seconds in stages.seconds.items())
    print("breakdown: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in stages.seconds.items()))
    if args.skip_naive:
        print(
            f"turns={done} seconds={elapsed:.1f} turns_per_s={ours_rate:.1f} peak_rss_mb={peak_rss_mb():.0f} "
            f"{breakdown} precision={chosen}"
        )
        return

    texts = naive_inputs(synthetic_dialogues(args.turns, args.seed, args.mean_turns))
    classifier = naive_pipeline(clf.device)
    naive(classifier, texts[:200], args.batch_size)  # warm-up
    started = time.perf_counter()
    done = naive(classifier, texts, args.batch_size)
    naive_rate = done / (time.perf_counter() - started)
    print(f"naive: {done} turns, {naive_rate:.1f} turns/s (transformers pipeline, same inputs and batch size)")

    small, large = args.memory_turns, 4 * args.memory_turns
    ours(clf, synthetic_dialogues(small, args.seed + 1, args.mean_turns), args.chunk_size, args.batch_size)
    rss_small = peak_rss_mb()
    ours(clf, synthetic_dialogues(large, args.seed + 2, args.mean_turns), args.chunk_size, args.batch_size)
    rss_large = peak_rss_mb()
    print(
        f"peak RSS after {small} turns: {rss_small:.0f} MB; after {large} turns: {rss_large:.0f} MB "
        f"(+{rss_large - rss_small:.0f} MB)"
    )
    print(f"ratio={ours_rate / naive_rate:.2f} turns_per_s={ours_rate:.1f} {breakdown} precision={chosen}")


if __name__ == "__main__":
    main()
