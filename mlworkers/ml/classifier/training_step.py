"""One optimisation step of the dialogue classifier (`dialogue_classifier.train` runs them): the
soft-target loss (with R-Drop's symmetric KL when asked), AdamW over parameter groups (the head at
its own lr, layer-wise lr decay down the encoder), the lr schedule (warm-up, then constant, linear or
cosine), gradient clipping, mixed precision and the EMA of the weights. Pure: no Django import.
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from mlworkers.ml.classifier import precision

if TYPE_CHECKING:
    from mlworkers.ml.classifier.model import DialogueClassifierModel, TrainConfig, TrainedClassifier


class Stepper:
    """One optimisation step at a time: AdamW (parameter groups, see `parameter_groups`), the lr
    schedule, the soft-target loss (with R-Drop when asked), clipping and the weights' EMA."""

    def __init__(self, clf: TrainedClassifier, total_steps: int) -> None:
        self.clf, self.total, self.done = clf, total_steps, 0
        self.optimizer = _optimizer(clf.model, clf.config)
        self.scheduler = _scheduler(self.optimizer, clf.config, total_steps)
        self.ema = WeightAverage(clf.model, clf.config.ema_decay) if clf.config.ema_decay else None
        # fp32 master weights; the forward pass runs under autocast in the chosen precision
        self.precision = precision.resolve(clf.config.precision, clf.device)
        self.scaler = (
            torch.amp.GradScaler(clf.device.type) if precision.needs_grad_scaler(self.precision, clf.device) else None
        )

    def __call__(self, batch: dict[str, torch.Tensor], targets: np.ndarray) -> float:
        model, device, config = self.clf.model, self.clf.device, self.clf.config
        inputs = {name: tensor.to(device) for name, tensor in batch.items()}
        target = torch.as_tensor(targets, device=device, dtype=torch.float32)
        with precision.autocast(self.precision, device):
            logits = model(**inputs)
            second = model(**inputs) if config.rdrop_alpha else None  # another dropout mask
        loss = soft_cross_entropy(logits, target, config.label_smoothing)  # computed in float32
        if second is not None:
            loss = (loss + soft_cross_entropy(second, target, config.label_smoothing)) / 2
            loss = loss + config.rdrop_alpha * symmetric_kl(logits, second)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
        else:
            loss.backward()
        if config.max_grad_norm:
            nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.scheduler.step()
        if self.ema:
            self.ema.update(model)
        self.done += 1
        return loss.item()

    def averaged_weights(self):
        return self.ema.swapped_in(self.clf.model) if self.ema else contextlib.nullcontext()


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy against target distributions (n, labels), smoothed like
    `nn.CrossEntropyLoss(label_smoothing=...)`: equal to it for one-hot targets. Computed in float32
    so that a bf16 or fp16 forward pass does not lose the loss's precision."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    target = target.float()
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / logits.shape[-1]
    return -(target * log_probs).sum(dim=-1).mean()


def symmetric_kl(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """R-Drop's term: (KL(p1 || p2) + KL(p2 || p1)) / 2, summed over labels, averaged over the batch."""
    log_p, log_q = torch.log_softmax(first.float(), dim=-1), torch.log_softmax(second.float(), dim=-1)
    return ((log_p.exp() - log_q.exp()) * (log_p - log_q)).sum(dim=-1).mean() / 2


class WeightAverage:
    """Exponential moving average of a model's floating-point weights, kept in float32:
    avg <- decay * avg + (1 - decay) * weights after every step. With `warmup` the decay is
    min(decay, (1 + t) / (10 + t)) at update t, so the random head's first values fade quickly."""

    def __init__(self, model: nn.Module, decay: float, warmup: bool = True) -> None:
        self.decay, self.warmup, self.updates = decay, warmup, 0
        self.average = {
            name: t.detach().float().clone() for name, t in model.state_dict().items() if t.is_floating_point()
        }

    def current_decay(self) -> float:
        return min(self.decay, (1 + self.updates) / (10 + self.updates)) if self.warmup else self.decay

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        decay = self.current_decay()
        state = model.state_dict()
        for name, average in self.average.items():
            average.mul_(decay).add_(state[name].detach().float(), alpha=1 - decay)
        self.updates += 1

    @contextlib.contextmanager
    def swapped_in(self, model: nn.Module):
        """Inside the block the model holds the averaged weights; its own come back after."""
        state = model.state_dict()
        own = {name: state[name].detach().clone() for name in self.average}
        with torch.no_grad():
            for name, average in self.average.items():
                state[name].copy_(average)
        try:
            yield model
        finally:
            with torch.no_grad():
                for name, weights in own.items():
                    state[name].copy_(weights)


def parameter_groups(model: DialogueClassifierModel, config: TrainConfig) -> list[dict[str, Any]]:
    """AdamW's groups: the head at `head_lr`; with layer_lr_decay < 1 one group per encoder layer,
    the top layer (and anything above the layers, like a pooler) at `lr`, each layer below at
    `layer_lr_decay` times the one above, the embeddings below the lowest layer."""
    num_layers = int(getattr(model.encoder.config, "num_hidden_layers", 0))
    depth: dict[int, list[nn.Parameter]] = {}  # steps below the top layer -> parameters
    for name, parameter in model.encoder.named_parameters():
        depth.setdefault(_depth_below_top(name, num_layers), []).append(parameter)
    groups = [
        {"params": params, "lr": config.lr * config.layer_lr_decay**steps, "name": f"encoder-{steps}"}
        for steps, params in sorted(depth.items())
    ]
    groups.append({"params": model.head_parameters(), "lr": config.head_lr or config.lr, "name": "head"})
    return groups


def _depth_below_top(name: str, num_layers: int) -> int:
    match = _LAYER_NAME.search(name)
    if match and num_layers:
        return num_layers - 1 - int(match.group(1))
    if "embeddings" in name:
        return num_layers
    return 0


_LAYER_NAME = re.compile(r"(?:^|\.)layers?\.(\d+)\.")


def _optimizer(model: DialogueClassifierModel, config: TrainConfig) -> torch.optim.Optimizer:
    groups = parameter_groups(model, config)
    return torch.optim.AdamW(groups, betas=config.betas, eps=config.eps, weight_decay=config.weight_decay)


def _scheduler(optimizer: torch.optim.Optimizer, config: TrainConfig, total_steps: int):
    warmup = int(config.warmup_ratio * total_steps)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        if config.schedule == "constant":
            return 1.0
        progress = (step - warmup) / max(1, total_steps - warmup)
        if config.schedule == "linear":
            return max(0.0, 1.0 - progress)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
