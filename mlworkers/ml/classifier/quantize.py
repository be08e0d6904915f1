"""int8 inference on the CPU: the encoder's linear layers in int8, activations scaled per token.

After a classifier loads in fp32, every `nn.Linear` of its encoder (attention projections and
feed-forward layers: nearly all of the CPU time) is replaced by an `Int8Linear`: int8 weights,
quantized per output channel once here, and activations quantized per token (one scale per row) on
the fly; the product is exact int32 arithmetic (`torch._int_mm`, oneDNN's int8 GEMM: VNNI where the
CPU has it). The embeddings, layer norms, attention softmax and the small head (attention pooling,
tanh layer, output) stay fp32: they cost little and the logits keep their scale. Everything else
about inference (length-sorted batches, top-k, the bulk job's threads) is unchanged, since the
model is still a `DialogueClassifierModel`.

Why per token and not `torch.ao.quantization.quantize_dynamic` (the first int8 path here): that
scales activations per batch, so one turn's label depended on the turns batched with it (8 % of
EDOS top labels changed between scored alone and in a batch of 64) and one outlier token cost the
whole batch resolution; its macro-F1 cost on EDOS was over the 0.5 point the CPU default allows.
Per-token scales remove the first and shrink the second (docs/model/classifier.md, "int8 on the CPU"; figures in docs/benchmarks/inference.md).
torchao's int8 configs ran eagerly through generic kernels and were many times slower than fp32 on
the 2-core AVX2 machine; ONNX Runtime needs an export step per model and three more packages.

Pure: no Django import.
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from mlworkers.ml.classifier.model import TrainedClassifier

logger = logging.getLogger(__name__)

# the smallest scale: an all-zero row or weight channel quantizes to zeros instead of dividing by 0
_TINY = 1e-12


class Int8Linear(nn.Module):
    """A linear layer in int8: weights quantized once per output channel, activations quantized
    per token (each row of the input gets its own scale) as they arrive, the product in exact
    int32 (`torch._int_mm`), then rescaled to fp32 and the fp32 bias added.

    Per-token scales keep every token's result independent of the other rows in the batch, so a
    turn's int8 prediction does not depend on which turns it was batched with, and a token with
    large activations (an outlier) costs resolution for its own row only. Both scales are symmetric
    (no zero point): 127 levels either side of zero."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        weight = linear.weight.detach().to(torch.float32)
        scale = weight.abs().amax(dim=1).clamp(min=_TINY) / 127
        self.in_features, self.out_features = linear.in_features, linear.out_features
        # _int_mm multiplies (M, K) by (K, N): the weight is kept transposed, quantized once
        self.register_buffer("weight_int8", torch.round(weight / scale[:, None]).to(torch.int8).t().contiguous())
        self.register_buffer("weight_scale", scale)
        bias = None if linear.bias is None else linear.bias.detach().to(torch.float32).clone()
        self.register_buffer("bias", bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features).to(torch.float32)
        # each row's largest magnitude (max and -min: no temporary |x| the size of the input)
        scale = torch.maximum(rows.amax(dim=1, keepdim=True), rows.amin(dim=1, keepdim=True).neg_())
        scale = scale.clamp_(min=_TINY).div_(127)
        # |x / scale| <= 127 by construction, so rounding cannot leave the int8 range
        quantized = torch.div(rows, scale).round_().to(torch.int8)
        product = torch._int_mm(quantized, self.weight_int8).to(torch.float32)  # no rows: (0, N)
        out = product.mul_(scale).mul_(self.weight_scale)
        if self.bias is not None:
            out.add_(self.bias)
        return out.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weights per channel, activations per token"


def quantize_encoder(model: nn.Module, inplace: bool = False) -> nn.Module:
    """The model with every linear layer of its encoder replaced by an `Int8Linear`. The model must
    be an fp32 model on the CPU."""
    parameter = next(model.parameters())
    if parameter.device.type != "cpu":
        raise ValueError(f"int8 quantization runs on the CPU only; the model is on {parameter.device}")
    if parameter.dtype != torch.float32:
        raise ValueError(f"int8 quantization starts from fp32 weights; the model is in {parameter.dtype}")
    if not hasattr(torch, "_int_mm"):
        raise RuntimeError(f"torch {torch.__version__} has no int8 matrix product (torch._int_mm); use fp32")
    model = model if inplace else copy.deepcopy(model)
    targets = [(name, module) for name, module in model.encoder.named_modules() if type(module) is nn.Linear]
    for name, module in targets:
        parent_name, _, child = name.rpartition(".")
        parent = model.encoder.get_submodule(parent_name) if parent_name else model.encoder
        setattr(parent, child, Int8Linear(module))
    return model.eval()


def quantize_classifier(clf: TrainedClassifier) -> TrainedClassifier:
    """Quantize a loaded fp32 classifier in place for int8 CPU inference; returns it."""
    quantize_encoder(clf.model, inplace=True)
    clf.precision = "int8"
    return clf
