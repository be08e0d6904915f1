"""The EDOS paper's Table 7 metrics for generated responses (pure: numpy and math, no Django).

- Distinct-n (Li et al. 2016): distinct n-grams over all n-grams, counted over every generated
  response together (an n-gram never crosses from one response into the next).
- SES: the mean cosine between the sentence embeddings of each generated response and its true
  response (the embeddings come from outside, e.g. the packaged MiniLM).
- Perplexity: exp of the mean negative log-likelihood per target token (nats).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

EncodeFunction = Callable[[list[str]], np.ndarray]


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[index : index + n]) for index in range(len(tokens) - n + 1)]


def distinct_n(responses: Iterable[Sequence[str]], n: int) -> float:
    """Distinct n-grams / all n-grams over the tokenised responses; 0.0 when there is no n-gram."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    seen: set[tuple[str, ...]] = set()
    total = 0
    for tokens in responses:
        grams = ngrams(list(tokens), n)
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else 0.0


def words(text: str) -> list[str]:
    """The tokens Distinct-n counts: lower-cased whitespace words (the papers' usual choice)."""
    return text.lower().split()


def cosine_rows(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two equally shaped matrices (a zero row has cosine 0)."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if first.shape != second.shape:
        raise ValueError(f"shapes differ: {first.shape} and {second.shape}")
    norms = np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1)
    dots = (first * second).sum(axis=1)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def sentence_embedding_similarity(generated: Sequence[str], truth: Sequence[str], encode: EncodeFunction) -> float:
    """SES: the mean cosine between the embeddings of each generated response and its true one."""
    if len(generated) != len(truth):
        raise ValueError(f"{len(generated)} generated responses for {len(truth)} true ones")
    if not generated:
        return 0.0
    return float(cosine_rows(encode(list(generated)), encode(list(truth))).mean())


def perplexity(total_nll: float, token_count: int) -> float:
    """exp(total negative log-likelihood / tokens); a uniform model over V tokens gives V."""
    if token_count < 1:
        raise ValueError("perplexity needs at least one target token")
    return math.exp(total_nll / token_count)
