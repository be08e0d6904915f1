"""Fast batched inference for the dialogue classifier (and the batching its training shares).

Why it is fast on a CPU: inputs are sorted by token length and batched in that order, so each
batch is padded only to its own longest input (never to the corpus maximum) and similar lengths
share a batch; the results are put back in the caller's order. Everything runs under
`torch.inference_mode()`. `predict_stream` works chunk by chunk so memory stays flat however
large the corpus is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

import numpy as np
import torch

from mlworkers.ml.classifier.inputs import build_input_from_tokens, special_ids, tokenize_turns, turn_weights
from mlworkers.ml.classifier.model import DialogueExample, TrainedClassifier

Encoded = tuple[list[int], list[int]]  # (input_ids, turn_index)
# Inference pads widths up to a multiple of 8: a few distinct shapes instead of up to 100 keeps the
# CPU kernels' per-shape caches (and so memory) small, at a cost of at most 7 padded tokens a row.
PAD_MULTIPLE = 8


def configure_threads(num_threads: int | None = None) -> int:
    """Set torch's intra-op threads: the argument, else ML_NUM_THREADS, else the CPUs this process may use."""
    if num_threads is None:
        from_env = os.environ.get("ML_NUM_THREADS", "").strip()
        num_threads = int(from_env) if from_env else len(os.sched_getaffinity(0))
    num_threads = max(1, num_threads)
    torch.set_num_threads(num_threads)
    return num_threads


def encode_examples(examples: Sequence[DialogueExample], tokenizer: Any, max_tokens: int) -> list[Encoded]:
    start_id, sep_id = special_ids(tokenizer)
    # The tokenizer is fastest called once on many strings; only the last max_tokens-worth of
    # history can survive truncation, so a long dialogue keeps just its recent turns.
    recent = [list(example.turns)[-max_tokens:] for example in examples]
    flat = [turn for turns in recent for turn in turns]
    tokens = tokenize_turns(flat, tokenizer, max_tokens) if flat else []
    encoded, offset = [], 0
    for turns in recent:
        encoded.append(build_input_from_tokens(tokens[offset : offset + len(turns)], start_id, sep_id, max_tokens))
        offset += len(turns)
    return encoded


def encode_dialogue(turns: Sequence[str], tokenizer: Any, max_tokens: int) -> list[Encoded]:
    """The input of EVERY turn of one dialogue (each with its history), tokenizing each turn once."""
    start_id, sep_id = special_ids(tokenizer)
    tokens = tokenize_turns(turns, tokenizer, max_tokens) if turns else []
    return [
        build_input_from_tokens(tokens[max(0, end - max_tokens) : end + 1], start_id, sep_id, max_tokens)
        for end in range(len(tokens))
    ]


def encode_dialogues(dialogues: Sequence[Sequence[str]], tokenizer: Any, max_tokens: int) -> list[list[Encoded]]:
    """`encode_dialogue` for many dialogues with ONE tokenizer call over all their turns (the fast
    tokenizer batches in Rust): for each dialogue, the input of every turn with its history."""
    start_id, sep_id = special_ids(tokenizer)
    flat = [turn for turns in dialogues for turn in turns]
    tokens = tokenize_turns(flat, tokenizer, max_tokens) if flat else []
    result, offset = [], 0
    for turns in dialogues:
        own = tokens[offset : offset + len(turns)]
        offset += len(turns)
        result.append(
            [
                build_input_from_tokens(own[max(0, end - max_tokens) : end + 1], start_id, sep_id, max_tokens)
                for end in range(len(own))
            ]
        )
    return result


def collate(
    items: Sequence[Encoded], pad_id: int, decay: float, pad_to_multiple_of: int = 1
) -> dict[str, torch.Tensor]:
    """Pad a batch to ITS longest input (rounded up to a multiple, see PAD_MULTIPLE); weights
    follow each token's turn (padding weight 0)."""
    width = -(-max(len(ids) for ids, _ in items) // pad_to_multiple_of) * pad_to_multiple_of
    input_ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(items), width), dtype=torch.long)
    weights = torch.zeros((len(items), width), dtype=torch.float32)
    for row, (ids, turn_index) in enumerate(items):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention_mask[row, : len(ids)] = 1
        weights[row, : len(ids)] = torch.tensor(turn_weights(turn_index, decay), dtype=torch.float32)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "token_weights": weights}


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Index batches in order of length (stable, so equal lengths keep their order)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = np.argsort(np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def _batched_logits(
    model: torch.nn.Module,
    encoded: Sequence[Encoded],
    pad_id: int,
    decay: float,
    batch_size: int,
    device: torch.device | str,
    sort_by_length: bool = True,
) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
    """(row indices, logits) batch by batch, under `torch.inference_mode()` with the model in eval
    mode (its training mode is put back after); batches are length-sorted unless told otherwise."""
    if sort_by_length:
        batches = length_sorted_batches([len(ids) for ids, _ in encoded], batch_size)
    else:
        batches = [
            np.arange(start, min(start + batch_size, len(encoded))) for start in range(0, len(encoded), batch_size)
        ]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for rows in batches:
                batch = collate([encoded[i] for i in rows], pad_id, decay, PAD_MULTIPLE)
                yield rows, model(**{name: tensor.to(device, non_blocking=True) for name, tensor in batch.items()})
    finally:
        model.train(was_training)


def predict_encoded(
    model: torch.nn.Module,
    encoded: Sequence[Encoded],
    *,
    pad_id: int,
    decay: float,
    batch_size: int = 64,
    device: torch.device | str = "cpu",
    sort_by_length: bool = True,
) -> np.ndarray:
    """Class probabilities (n, labels) in the order of `encoded`."""
    probabilities = np.empty((len(encoded), model.num_labels), dtype=np.float32)
    for rows, logits in _batched_logits(model, encoded, pad_id, decay, batch_size, device, sort_by_length):
        probabilities[rows] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
    return probabilities


def predict_top_k_encoded(
    model: torch.nn.Module,
    encoded: Sequence[Encoded],
    *,
    k: int,
    pad_id: int,
    decay: float,
    batch_size: int = 64,
    device: torch.device | str = "cpu",
    temperature: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The k best labels of every input: (indices (n, k) int64, probabilities (n, k) float32),
    best first, rows in the order of `encoded`. Softmax and `torch.topk` run on the model's device,
    so only k columns a row come back to the host (the full (n, labels) matrix never does).
    Logits are divided by `temperature` first (1.0: the model's own probabilities)."""
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    k = min(k, model.num_labels)
    indices = np.empty((len(encoded), k), dtype=np.int64)
    values = np.empty((len(encoded), k), dtype=np.float32)
    for rows, logits in _batched_logits(model, encoded, pad_id, decay, batch_size, device):
        best = torch.topk(torch.softmax(logits.float() / temperature, dim=-1), k, dim=-1)
        values[rows] = best.values.cpu().numpy()
        indices[rows] = best.indices.cpu().numpy()
    return indices, values


def predict_examples(
    clf: TrainedClassifier, examples: Sequence[DialogueExample], batch_size: int = 64, sort_by_length: bool = True
) -> np.ndarray:
    encoded = encode_examples(examples, clf.tokenizer, clf.config.max_tokens)
    return predict_encoded_with(clf, encoded, batch_size=batch_size, sort_by_length=sort_by_length)


def predict_encoded_with(
    clf: TrainedClassifier, encoded: Sequence[Encoded], batch_size: int = 64, sort_by_length: bool = True
) -> np.ndarray:
    return predict_encoded(
        clf.model,
        encoded,
        pad_id=clf.tokenizer.pad_token_id or 0,
        decay=clf.config.turn_weight_decay,
        batch_size=batch_size,
        device=clf.device,
        sort_by_length=sort_by_length,
    )


def predict_texts(clf: TrainedClassifier, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Probabilities for single sentences (each a one-turn dialogue, no context)."""
    return predict_examples(clf, [DialogueExample([text]) for text in texts], batch_size=batch_size)


def predict_stream(
    clf: TrainedClassifier,
    examples: Iterable[DialogueExample],
    chunk_size: int = 10_000,
    batch_size: int = 64,
    on_chunk: Callable[[int], None] | None = None,
) -> Iterator[np.ndarray]:
    """Yield probabilities chunk by chunk (each chunk length-sorted inside); memory depends on
    chunk_size, not on how many examples the iterable holds."""
    iterator = iter(examples)
    done = 0
    while chunk := list(islice(iterator, chunk_size)):
        probabilities = predict_examples(clf, chunk, batch_size=batch_size)
        done += len(chunk)
        if on_chunk:
            on_chunk(done)
        yield probabilities


def top_k(probabilities: np.ndarray, label_names: Sequence[str], k: int = 5) -> list[list[Any]]:
    """[[name, probability], ...] best first for one row of probabilities."""
    best = np.argsort(-probabilities, kind="stable")[:k]
    return [[label_names[i], round(float(probabilities[i]), 6)] for i in best]
