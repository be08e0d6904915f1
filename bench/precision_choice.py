"""What "auto" picks for inference on this machine, and the timings it picked from.

Builds a classifier of the default backbone's shape (all-MiniLM-L6-v2: 6 layers, 384 hidden, 12
heads, 1,536 feed-forward; random weights from the config alone, so nothing is downloaded and the
script runs where only torch and transformers are installed), then:
- on the CPU, for each thread count asked: `mlworkers.ml.classifier.cpu_precision.measure` (fp32 against the
  int8 copy on one 16 x 64-token batch, the loader's own trial) and a longer timing of both on
  bulk-sized batches (64 x 64 tokens, 20 batches), so the trial's choice can be checked against
  the throughput it stands for;
- on a CUDA GPU, when there is one: fp32 against bf16 (what "auto" runs there) on the same batches.

    python bench/precision_choice.py [--threads 2 8] [--batches 20]

Ends with one line: cpu= int8_flags= chosen= int8_over_fp32= (the bulk-sized ratio at the first
thread count) and, with a GPU, bf16_over_fp32=.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import copy
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlworkers.ml.classifier import cpu_precision
from mlworkers.ml.classifier.quantize import quantize_encoder

LABELS = 41


def minilm_shaped_classifier():
    """A DialogueClassifierModel-like module (encoder + attention pooling head) of MiniLM's shape,
    wrapped the way cpu_precision expects (`clf.model.encoder.config`)."""
    from transformers import BertConfig, BertModel

    from mlworkers.ml.classifier.model import DialogueClassifierModel

    config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                        intermediate_size=1536, max_position_embeddings=512)  # fmt: skip
    model = DialogueClassifierModel(BertModel(config), LABELS).eval()

    class Loaded:
        pass

    clf = Loaded()
    clf.model = model
    return clf


def batches(count: int, rows: int = 64, tokens: int = 64, device: str = "cpu"):
    generator = torch.Generator().manual_seed(1)
    out = []
    for _ in range(count):
        ids = torch.randint(1000, 30000, (rows, tokens), generator=generator)
        out.append({"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device),
                    "token_weights": torch.ones(ids.shape).to(device)})  # fmt: skip
    return out


def seconds(model, inputs, device: str = "cpu") -> float:
    with torch.inference_mode():
        model(**inputs[0])  # warm-up
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        for batch in inputs:
            model(**batch)
        if device == "cuda":
            torch.cuda.synchronize()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    cpu, flags = cpu_precision.cpu_description()
    print(f"torch {torch.__version__}; CPU {cpu}; int8 flags: {', '.join(flags) or 'none (no VNNI or AMX)'}")
    clf = minilm_shaped_classifier()
    int8_model = quantize_encoder(copy.deepcopy(clf.model), inplace=True)
    first = None
    for threads in args.threads:
        torch.set_num_threads(threads)
        choice = cpu_precision.measure(clf)
        inputs = batches(args.batches)
        fp32, int8 = seconds(clf.model, inputs), seconds(int8_model, inputs)
        turns = args.batches * 64
        print(f"{threads} threads: trial {choice.summary()}")
        print(f"{threads} threads: bulk-sized fp32 {turns / fp32:.0f} turns/s, int8 {turns / int8:.0f} turns/s "
              f"(int8/fp32 time {int8 / fp32:.2f})")  # fmt: skip
        if first is None:
            first = (choice.precision, int8 / fp32)
    line = f"cpu={cpu.replace(' ', '_')} int8_flags={','.join(flags) or 'none'} chosen={first[0]} int8_over_fp32={first[1]:.2f}"
    if torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
        model = clf.model.to("cuda")
        inputs = batches(args.batches * 10, rows=256, device="cuda")
        fp32 = seconds(model, inputs, "cuda")
        bf16 = seconds(copy.deepcopy(model).to(dtype=torch.bfloat16), inputs, "cuda")
        turns = args.batches * 10 * 256
        print(
            f"GPU {gpu}: fp32 {turns / fp32:.0f} turns/s, bf16 {turns / bf16:.0f} turns/s (batches of 256 x 64 tokens)"
        )
        line += f" gpu={gpu.replace(' ', '_')} bf16_over_fp32={bf16 / fp32:.2f}"
    print(line)


if __name__ == "__main__":
    main()
