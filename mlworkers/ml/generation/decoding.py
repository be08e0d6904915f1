"""Beam search with repeated n-gram blocking, for one input at a time (pure torch, no Django).

The model is hidden behind `step(prefixes) -> log-probabilities`: prefixes is a (beams, length)
tensor of token ids starting with BOS, the answer a (beams, vocab) tensor for the next token. A
hypothesis that would repeat an n-gram it already holds (n = `block_ngram`, the paper's 4) gets
that token at -inf, so no returned sequence repeats one. A hypothesis ends with EOS; its score is
the sum of its log-probabilities over length ** `length_penalty`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

StepFunction = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class BeamSettings:
    beam_size: int = 32
    max_length: int = 40
    min_length: int = 1
    block_ngram: int = 4
    length_penalty: float = 1.0


def blocked_tokens(sequence: Sequence[int], n: int) -> set[int]:
    """Tokens that, appended to `sequence`, would repeat one of its n-grams (none when n < 1)."""
    if n < 1 or len(sequence) < n - 1:
        return set()
    if n == 1:
        return set(sequence)
    tail = tuple(sequence[len(sequence) - (n - 1) :])
    return {
        sequence[index + n - 1]
        for index in range(len(sequence) - n + 1)
        if tuple(sequence[index : index + n - 1]) == tail
    }


def has_repeated_ngram(sequence: Sequence[int], n: int) -> bool:
    grams = [tuple(sequence[index : index + n]) for index in range(len(sequence) - n + 1)]
    return len(grams) != len(set(grams))


def beam_search(step: StepFunction, bos_id: int, eos_id: int, settings: BeamSettings = BeamSettings()) -> list[int]:
    """The best hypothesis's tokens (without BOS and EOS). An EOS among a step's `beam_size` best
    candidates ends that hypothesis; the search stops when `beam_size` have ended and no live one
    can still beat them, or at `max_length`, where the live ones count as ended."""
    prefixes = torch.tensor([[bos_id]], dtype=torch.long)
    scores = torch.zeros(1)
    finished: list[tuple[float, list[int]]] = []
    for length in range(1, settings.max_length + 1):
        log_probs = step(prefixes).float().clone()
        _block(log_probs, prefixes, settings, eos_id, length)
        candidates = (scores[:, None] + log_probs).view(-1)
        top_scores, top_ids = candidates.topk(min(2 * settings.beam_size, candidates.numel()))
        rows, tokens, kept = [], [], []
        for rank, (total, flat) in enumerate(zip(top_scores.tolist(), top_ids.tolist(), strict=True)):
            if total == float("-inf") or len(rows) == settings.beam_size:
                break
            row, token = divmod(flat, log_probs.shape[1])
            if token != eos_id:
                rows.append(row), tokens.append(token), kept.append(total)
            elif rank < settings.beam_size:
                finished.append((_normalised(total, length - 1, settings), prefixes[row, 1:].tolist()))
        if not rows:
            break
        prefixes = torch.cat([prefixes[torch.tensor(rows)], torch.tensor(tokens)[:, None]], dim=1)
        scores = torch.tensor(kept)
        if _done(finished, max(kept), length, settings):
            break
    else:
        finished += [
            (_normalised(s, len(p) - 1, settings), p[1:])
            for s, p in zip(scores.tolist(), prefixes.tolist(), strict=True)
        ]
    return max(finished, key=lambda item: item[0])[1] if finished else []


def _normalised(total: float, length: int, settings: BeamSettings) -> float:
    return total / max(length, 1) ** settings.length_penalty


def _done(finished: list[tuple[float, list[int]]], best_live: float, length: int, settings: BeamSettings) -> bool:
    if len(finished) < settings.beam_size:
        return False
    kth_best = sorted((score for score, _ in finished), reverse=True)[settings.beam_size - 1]
    return _normalised(best_live, length, settings) <= kth_best


def _block(log_probs: torch.Tensor, prefixes: torch.Tensor, settings: BeamSettings, eos_id: int, length: int) -> None:
    if length <= settings.min_length:
        log_probs[:, eos_id] = float("-inf")
    if settings.block_ngram < 1:
        return
    for row, prefix in enumerate(prefixes.tolist()):
        banned = blocked_tokens(prefix[1:], settings.block_ngram)
        if banned:
            log_probs[row, list(banned)] = float("-inf")
