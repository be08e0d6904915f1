"""Numeric precision of the models: fp32, bf16 or fp16, chosen by ML_PRECISION (or an argument).

"auto" picks bf16 on a CUDA GPU that supports it (Ampere and newer), fp16 on an older CUDA GPU,
and fp32 everywhere else (the CPU, Apple MPS): bf16 matmuls on a CPU without AMX are slower than
fp32, so a CPU runs bf16 only when asked. Inference casts the whole model to the dtype; training
keeps fp32 master weights and runs the forward pass under autocast (fp16 adds a gradient scaler).
Pure: no Django import.
"""

from __future__ import annotations

import contextlib
import os

import torch

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def configured_precision() -> str:
    """ML_PRECISION from the environment (the settings module validates the same variable)."""
    return check_precision(os.environ.get("ML_PRECISION", "auto").strip().lower() or "auto")


def check_precision(name: str) -> str:
    if name not in PRECISIONS:
        raise ValueError(f"precision {name!r} must be one of {', '.join(PRECISIONS)}")
    return name


def resolve(name: str | None, device: torch.device | str) -> str:
    """The concrete precision ("fp32", "bf16" or "fp16") for `name` (None = ML_PRECISION) on `device`."""
    name = configured_precision() if name is None else check_precision(name)
    if name != "auto":
        return name
    device = torch.device(device)
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "fp32"


def dtype_of(name: str) -> torch.dtype:
    return _DTYPES[check_precision(name)] if name != "auto" else torch.float32


def autocast(name: str, device: torch.device | str):
    """The autocast context for a training forward pass (a no-op context for fp32)."""
    device = torch.device(device)
    if name == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=_DTYPES[name])


def needs_grad_scaler(name: str, device: torch.device | str) -> bool:
    """fp16 gradients underflow without loss scaling; bf16 has fp32's exponent range and does not."""
    return name == "fp16" and torch.device(device).type == "cuda"
