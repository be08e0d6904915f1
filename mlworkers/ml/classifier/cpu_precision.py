"""What "auto" means for inference on a CPU: fp32 or int8, whichever runs faster on this machine.

int8 (`mlworkers.ml.classifier.quantize`) ran at 2.0x fp32's speed on one CPU with fast int8 kernels (a 2-core
EPYC with AVX-512 VNNI), at 1.07x on another (a Xeon with AMX, 2 threads) and at 0.95x on the same
Xeon with 16 threads, and 22 to 36 times slower on one without them: on a 2-core
AMD EPYC with AVX2 only, `make demo`'s bulk annotation sat at 0 of 5,963 turns for 43 minutes in
int8 and took 133 s in fp32 (issue 44). Which one a CPU is cannot be read reliably from its name,
and restricting a fast CPU's instruction set does not reproduce a slow one (oneDNN limited to AVX2
on an AVX-512 machine still ran int8 faster than fp32), so the first load on a machine times both
on a batch of bulk annotation's size and keeps the faster: int8 only when it takes at most
INT8_SHARE of fp32's time, since it costs about 0.1 macro-F1 point (docs/benchmarks/inference.md). First
one layer is timed both ways (the encoder's largest linear layer on a bulk batch's activations, a
warm-up and one counted run each): an int8 layer slower than fp32's by STOP_AFTER ends the trial
before a whole batch runs in int8. On a 2-core AVX2 EPYC at load 7-9, one int8 batch of bulk size
took 48-202 s against fp32's 4.2-4.3 s, and the whole-batch trial cost `make demo` up to 400 s; a
probe of 2 rows did not catch it (int8 was within 3x of fp32 on 2 rows, 11.6x on 64). A
whole-batch int8 run slower than fp32 by STOP_AFTER still stops after its first counted run.

The choice is kept per process and model shape (each bulk shard of a worker measures once) and is
recorded with its timings and the CPU's model and int8-related flags: the bulk job's result and log
carry it, and the model's page shows it. ML_PRECISION (or a job's `precision`) still forces one.
Pure: no Django import.
"""

from __future__ import annotations

import copy
import logging
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from mlworkers.ml.classifier.quantize import quantize_encoder

if TYPE_CHECKING:
    from mlworkers.ml.classifier.model import TrainedClassifier

logger = logging.getLogger(__name__)

INT8_SHARE = 0.8  # int8 is kept when it takes at most this share of fp32's time
STOP_AFTER = 3.0  # an int8 run this many times slower than fp32's best ends the trial
# a batch of bulk annotation's size: smaller ones favour int8 more than whole batches do (on a 2-thread
# Xeon with AMX, 0.70 of fp32's time on 16 rows against 0.93 on bulk-sized ones)
TRIAL_ROWS, TRIAL_TOKENS, TRIAL_RUNS = 64, 64, 2
# the instruction-set extensions that give int8 products their fast kernels (as /proc/cpuinfo spells them)
FAST_INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")

_chosen: dict[tuple, PrecisionChoice] = {}


@dataclass(frozen=True)
class PrecisionChoice:
    precision: str  # "fp32" or "int8"
    reason: str
    fp32_ms: float | None
    int8_ms: float | None
    cpu: str
    int8_flags: tuple[str, ...]  # which of FAST_INT8_FLAGS this CPU has ("unknown" where unreadable)
    threads: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        timings = ", ".join(
            f"{name} {value:.1f} ms" for name, value in (("fp32", self.fp32_ms), ("int8", self.int8_ms)) if value
        )
        flags = ", ".join(self.int8_flags) or "no VNNI/AMX"
        return f"{self.precision} ({self.reason}; {timings}; {self.cpu}, {flags}, {self.threads} threads)"


def cpu_description(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, tuple[str, ...]]:
    """The CPU's model name and which FAST_INT8_FLAGS it has (("unknown",) where /proc/cpuinfo is
    not there to read, as on macOS)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine(), ("unknown",)
    fields: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    return fields.get("model name", platform.machine()), tuple(flag for flag in FAST_INT8_FLAGS if flag in flags)


def choose(clf: TrainedClassifier) -> PrecisionChoice:
    """fp32 or int8 for this fp32 classifier on this CPU: measured once per process and model shape."""
    config = clf.model.encoder.config
    key = (type(clf.model.encoder).__name__, config.hidden_size, config.num_hidden_layers, torch.get_num_threads())
    if key not in _chosen:
        _chosen[key] = measure(clf)
        logger.info("inference precision on this CPU: %s", _chosen[key].summary())
    return _chosen[key]


def forget() -> None:
    """Measure again on the next load (tests; a process whose CPU share changed)."""
    _chosen.clear()


def measure(clf: TrainedClassifier) -> PrecisionChoice:
    """Time the fp32 model and an int8 copy of it on one bulk-sized batch, best of TRIAL_RUNS each."""
    cpu, flags = cpu_description()
    threads = torch.get_num_threads()
    batch = _trial_batch(clf)
    if not hasattr(torch, "_int_mm"):
        fp32_ms = _best_ms(clf.model, batch)
        return PrecisionChoice("fp32", "this torch has no int8 product", fp32_ms, None, cpu, flags, threads)
    fp32_layer_ms, int8_layer_ms = _layer_probe(clf.model.encoder)
    if int8_layer_ms > STOP_AFTER * fp32_layer_ms:
        reason = (
            f"measured on one layer: int8 took {int8_layer_ms / fp32_layer_ms:.2f} of fp32's time "
            f"(over {STOP_AFTER:g}: no whole batch run in int8)"
        )
        return PrecisionChoice("fp32", reason, fp32_layer_ms, int8_layer_ms, cpu, flags, threads)
    int8_model = quantize_encoder(copy.deepcopy(clf.model), inplace=True)
    fp32_ms = _best_ms(clf.model, batch)
    int8_ms = _best_ms(int8_model, batch, stop_above=STOP_AFTER * fp32_ms)
    if int8_ms <= INT8_SHARE * fp32_ms:
        reason = f"measured: int8 took {int8_ms / fp32_ms:.2f} of fp32's time"
        return PrecisionChoice("int8", reason, fp32_ms, int8_ms, cpu, flags, threads)
    reason = f"measured: int8 took {int8_ms / fp32_ms:.2f} of fp32's time (kept only at {INT8_SHARE} or less)"
    return PrecisionChoice("fp32", reason, fp32_ms, int8_ms, cpu, flags, threads)


def _trial_batch(clf: TrainedClassifier) -> dict[str, torch.Tensor]:
    """A batch shaped like bulk annotation's (rows of turns with their history), of fixed token ids."""
    vocabulary = clf.model.encoder.config.vocab_size
    generator = torch.Generator().manual_seed(0)
    first = min(1000, vocabulary // 4)  # past the special tokens of a real vocabulary
    ids = torch.randint(first, max(first + 1, vocabulary - 1), (TRIAL_ROWS, TRIAL_TOKENS), generator=generator)
    return {
        "input_ids": ids,
        "attention_mask": torch.ones_like(ids),
        "token_weights": torch.ones(ids.shape, dtype=torch.float32),
    }


def _layer_probe(encoder: torch.nn.Module) -> tuple[float, float]:
    """The encoder's largest linear layer timed in fp32 and as an Int8Linear on the activations of
    one bulk-sized batch (TRIAL_ROWS x TRIAL_TOKENS rows): a warm-up and one counted run each."""
    from mlworkers.ml.classifier.quantize import Int8Linear

    linears = [module for module in encoder.modules() if type(module) is torch.nn.Linear]
    layer = max(linears, key=lambda module: module.in_features * module.out_features)
    rows = torch.randn(TRIAL_ROWS * TRIAL_TOKENS, layer.in_features, generator=torch.Generator().manual_seed(0))
    timings = []
    with torch.inference_mode():
        for module in (layer, Int8Linear(layer)):
            module(rows)  # warm-up
            started = time.perf_counter()
            module(rows)
            timings.append((time.perf_counter() - started) * 1000)
    return timings[0], timings[1]


def _best_ms(model: torch.nn.Module, batch: dict[str, torch.Tensor], stop_above: float | None = None) -> float:
    model.eval()
    best = float("inf")
    with torch.inference_mode():
        for run in range(TRIAL_RUNS + 1):  # the first run warms the kernels' caches up, and is not counted
            started = time.perf_counter()
            model(**batch)
            elapsed = (time.perf_counter() - started) * 1000
            if run:
                best = min(best, elapsed)
                if stop_above is not None and elapsed > stop_above:
                    return best  # already too slow to be chosen: no need to wait for more
    return best
