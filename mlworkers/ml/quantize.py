"""int8 inference on the CPU: dynamic quantization of the encoder's linear layers.

After a classifier loads in fp32, every `nn.Linear` of its encoder (attention projections and
feed-forward layers: nearly all of the CPU time) is replaced by a dynamically quantized one: int8
weights, quantized per output channel once here, and activations quantized per batch on the fly
(`torch.ao.quantization.quantize_dynamic`, fbgemm/x86 kernels). The embeddings, layer norms and
the small head (attention pooling, tanh layer, output) stay fp32: they cost little and the logits
keep their scale. Everything else about inference (length-sorted batches, top-k, the bulk job's
threads) is unchanged, since the model is still a `DialogueClassifierModel`.

Why this and not torchao or ONNX Runtime (measured on this 2-core AVX2 CPU with the packaged MiniLM,
README "int8 on the CPU"): torchao's int8 configs run eagerly through generic kernels and were many
times SLOWER than fp32 here; ONNX Runtime's dynamic int8 was slower than this, needs an export step
per model and three more packages. `torch.ao.quantization` warns that it is deprecated, but it is
present and tested in the pinned torch 2.13.0.

Pure: no Django import.
"""

from __future__ import annotations

import copy
import logging
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import nn

from mlworkers.ml import precision

if TYPE_CHECKING:
    from mlworkers.ml.dialogue_classifier import TrainedClassifier

logger = logging.getLogger(__name__)

# quantized engines with int8 linear kernels, best first (x86 and fbgemm: AVX2/AVX-512; qnnpack: ARM)
_ENGINES = ("x86", "fbgemm", "onednn", "qnnpack")


def quantized_engine() -> str:
    """Select and return the quantized engine for this CPU (an error when torch has none)."""
    supported = torch.backends.quantized.supported_engines
    for engine in _ENGINES:
        if engine in supported:
            if torch.backends.quantized.engine != engine:
                torch.backends.quantized.engine = engine
            return engine
    raise RuntimeError(f"this torch build has no int8 CPU kernels (quantized engines: {supported}); use fp32")


def quantize_encoder(model: nn.Module, inplace: bool = False) -> nn.Module:
    """The model with its encoder's linear layers quantized to int8 (weights per output channel,
    activations dynamically per batch). The model must be an fp32 model on the CPU."""
    parameter = next(model.parameters())
    if parameter.device.type != "cpu":
        raise ValueError(f"int8 quantization runs on the CPU only; the model is on {parameter.device}")
    if parameter.dtype != torch.float32:
        raise ValueError(f"int8 quantization starts from fp32 weights; the model is in {parameter.dtype}")
    quantized_engine()
    model = model if inplace else copy.deepcopy(model)
    with warnings.catch_warnings():
        # torch 2.13 marks torch.ao.quantization deprecated (in favour of torchao, slower here)
        warnings.filterwarnings("ignore", message=r"torch\.ao\.quantization is deprecated", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=r".*quantize_per_tensor.*deprecated", category=UserWarning)
        model.encoder = torch.ao.quantization.quantize_dynamic(
            model.encoder,
            {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig},
            dtype=torch.qint8,
        )
    return model.eval()


def quantize_classifier(clf: TrainedClassifier) -> TrainedClassifier:
    """Quantize a loaded fp32 classifier in place for int8 CPU inference; returns it."""
    quantize_encoder(clf.model, inplace=True)
    clf.precision = "int8"
    return clf


def load_for_inference(
    directory: str | Path, device: str | torch.device | None = None, precision_name: str | None = None
) -> TrainedClassifier:
    """A saved classifier ready for inference in `precision_name` (None = ML_PRECISION), on `device`
    (None = the saved config's). fp32/bf16/fp16 load as `load_classifier` loads them; "int8", and
    "auto" on a CPU when CPU_INFERENCE_DEFAULT is int8, load fp32 and quantize; "int8" on a GPU runs
    in the GPU's own precision instead (a logged warning; see precision.inference_precision).
    `clf.precision` says which precision the model is in."""
    from mlworkers.ml.dialogue_classifier import load_classifier

    name = precision.configured_precision() if precision_name is None else precision.check_precision(precision_name)
    if name not in ("int8", "auto"):
        return load_classifier(directory, device=device, precision_name=name)
    # "auto" loads fp32 on a CPU and bf16/fp16 on a GPU; int8 then quantizes the fp32 one
    clf = load_classifier(directory, device=device, precision_name="auto")
    if precision.inference_precision(name, clf.device) != "int8":
        return clf
    return quantize_classifier(clf)
