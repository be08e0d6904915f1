"""Numeric precision of the models: fp32, bf16, fp16 or int8, chosen by ML_PRECISION (or an argument).

fp32, bf16 and fp16 are dtypes: inference casts the whole model to the dtype; training keeps fp32
master weights and runs the forward pass under autocast (fp16 adds a gradient scaler). For those,
`resolve` turns "auto" into bf16 on a CUDA GPU that supports it (Ampere and newer), fp16 on an older
CUDA GPU, and fp32 everywhere else (the CPU, Apple MPS): bf16 matmuls on a CPU without AMX are
slower than fp32, so a CPU runs bf16 only when asked.

int8 is for inference on the CPU only: the model loads in fp32 and its encoder's linear layers are
then quantized (`mlworkers.ml.classifier.quantize`, which owns that path); training refuses it. For inference,
`inference_precision` turns "auto" on a CPU into CPU_AUTO ("measured": fp32 or int8, timed on this
machine by `mlworkers.ml.classifier.cpu_precision`), and "int8" on any other
device into that device's "auto" precision, with a logged warning (see the function for why).
Pure: no Django import.
"""

from __future__ import annotations

import contextlib
import logging
import os

import torch

PRECISIONS = ("auto", "fp32", "bf16", "fp16", "int8")
_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# What "auto" means for inference on a CPU: "measured", fp32 or int8, whichever the loader times
# faster on this machine (mlworkers.ml.classifier.cpu_precision). int8 may be chosen at all because
# bench/int8_edos.py measured its EDOS test macro-F1 cost against fp32 at 0.12 point (mean of the
# seed-13/14/15 checkpoints), within the 0.5 point the CPU default allows (issue 13); it is the
# faster one only where the CPU has fast int8 kernels: on an AVX2-only EPYC it was 22-36x slower
# (issue 44). docs/benchmarks/inference.md has the figures.
CPU_AUTO = "measured"

logger = logging.getLogger(__name__)


def configured_precision() -> str:
    """ML_PRECISION from the environment (the settings module validates the same variable)."""
    return check_precision(os.environ.get("ML_PRECISION", "auto").strip().lower() or "auto")


def check_precision(name: str) -> str:
    if name not in PRECISIONS:
        raise ValueError(f"precision {name!r} must be one of {', '.join(PRECISIONS)}")
    return name


def resolve(name: str | None, device: torch.device | str) -> str:
    """The dtype precision ("fp32", "bf16" or "fp16") for `name` (None = ML_PRECISION) on `device`:
    what training's autocast and `load_classifier`'s cast use. "int8" is refused here: it is not a
    dtype to cast to but a step after loading
    (`mlworkers.ml.classifier.dialogue_classifier.load_for_inference`)."""
    name = configured_precision() if name is None else check_precision(name)
    if name == "int8":
        raise ValueError(
            "precision 'int8' is for CPU inference only: train in auto, fp32, bf16 or fp16, and load a "
            "model for int8 inference with mlworkers.ml.classifier.dialogue_classifier.load_for_inference"
        )
    if name != "auto":
        return name
    device = torch.device(device)
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "fp32"


def inference_precision(name: str | None, device: torch.device | str) -> str:
    """The precision ("fp32", "bf16", "fp16" or "int8") inference runs in for `name` (None =
    ML_PRECISION) on `device`: "auto" is CPU_AUTO on a CPU (the loader measures which of fp32 and
    int8 is faster there: mlworkers.ml.classifier.cpu_precision) and `resolve`'s choice
    elsewhere. "int8" on a GPU (or MPS) falls back to that device's "auto" precision with a logged
    warning rather than failing: ML_PRECISION is one setting for a whole fleet, and a sharded bulk
    annotation runs on whichever ml worker is free, CPU or GPU, so a refusal would fail the shards
    that happen to land on a GPU. The precision actually used is in the bulk job's result."""
    name = configured_precision() if name is None else check_precision(name)
    device = torch.device(device)
    if device.type == "cpu":
        return CPU_AUTO if name == "auto" else name
    if name == "int8":
        fallback = resolve("auto", device)
        logger.warning("precision int8 runs on the CPU only; on %s this model runs in %s instead", device, fallback)
        return fallback
    return resolve(name, device)


def dtype_of(name: str) -> torch.dtype:
    """The dtype of the weights: "auto" and "int8" load in float32 (int8 quantizes after loading)."""
    return _DTYPES.get(check_precision(name), torch.float32)


def autocast(name: str, device: torch.device | str):
    """The autocast context for a training forward pass (a no-op context for fp32)."""
    device = torch.device(device)
    if name == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=_DTYPES[name])


def needs_grad_scaler(name: str, device: torch.device | str) -> bool:
    """fp16 gradients underflow without loss scaling; bf16 has fp32's exponent range and does not."""
    return name == "fp16" and torch.device(device).type == "cuda"
