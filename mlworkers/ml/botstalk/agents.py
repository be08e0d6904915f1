"""BotsTalk: skill agents talk, a moderator filters, the mic passes on skill similarity. Pure: no Django.

One agent per skill retrieves responses from its own pool: a bi-encoder (sentence-transformers)
embeds the pool once, and `ranker(vectors)` gives exact inner-product top-k, FAISS `IndexFlatIP`
when faiss imports, else a torch matrix product + `torch.topk` with the same interface.

Each turn, every agent takes its `top_k` best candidates for the dialogue so far (turn vectors,
weights halving going back, plus its own skill context). The moderator refuses a candidate when
the NLI gives P(contradiction) >= `nli_threshold` for any premise (each piece of skill context,
hypothesis the candidate); an agent proposes its best candidate that survives. The skill
classifier gives each proposal a skill distribution. The active agent keeps the mic with its own
proposal unless another agent's proposal q has KL(p || q) < alpha, p the distribution of the
previous response: then the closest such agent takes the mic (alpha 0 never passes: KL >= 0).
A dialogue ends after `turns` turns, or earlier when the active agent has nothing left to say.

Agents speak from the corpus's interaction-response pairs in `botstalk_corpus` (CorpusAgent); a
SkillAgent here speaks from a hand-written pool, the fallback for an empty corpus. The loop gives
either an AgentQuery and sees only its candidates.

The interfaces the loop needs are Protocols, so tests can drive it with hand-made models.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from mlworkers.ml.botstalk.files import DialogueContexts, PoolUtterance
from mlworkers.ml.expansion.embeddings import decay_weights, normalise_rows

KL_EPSILON = 1e-6
KL_QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
KL_BIN_EDGES = (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, math.inf)


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


class NLI(Protocol):
    def contradiction_probabilities(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray: ...


class SkillClassifier(Protocol):
    skill_names: list[str]

    def distributions(self, texts: Sequence[str]) -> np.ndarray: ...


# --- retrieval --------------------------------------------------------------------------------


class FaissTopK:
    name = "faiss"

    def __init__(self, vectors: np.ndarray):
        import faiss

        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, self.index.ntotal)
        return self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)


class TorchTopK:
    name = "torch"

    def __init__(self, vectors: np.ndarray):
        import torch

        self.vectors = torch.as_tensor(np.asarray(vectors, dtype=np.float32))

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        import torch

        k = min(k, len(self.vectors))
        scores = torch.as_tensor(np.asarray(queries, dtype=np.float32)) @ self.vectors.T
        top = torch.topk(scores, k, dim=1)  # ties: torch's order; FAISS prefers the lower index
        return top.values.numpy(), top.indices.numpy().astype(np.int64)


def ranker(vectors: np.ndarray, method: str = "auto"):
    """Exact inner-product top-k over `vectors`: FAISS when it imports ("auto"), else torch."""
    if method in ("auto", "faiss"):
        try:
            return FaissTopK(vectors)
        except ImportError:
            if method == "faiss":
                raise
    if method in ("auto", "torch"):
        return TorchTopK(vectors)
    raise ValueError(f"unknown ranker {method!r}; use auto, faiss or torch")


@dataclass
class AgentQuery:
    """What an agent retrieves by, one per agent and turn. `vector` is the pool ranker's query (the
    dialogue so far plus the agent's own context); a corpus agent reads the parts (botstalk_corpus)."""

    vector: np.ndarray
    turns: list[str]  # the dialogue so far, oldest first
    recent: np.ndarray | None  # the turn vectors, weights halving going back; None before the first turn
    context: np.ndarray | None  # the mean vector of the agent's own skill context; None when it has none
    context_texts: list[str] = field(default_factory=list)


class Agent(Protocol):
    skill: str

    def candidates(self, query: AgentQuery, k: int, exclude: set[str]) -> list[tuple[str, float]]: ...


@dataclass
class SkillAgent:
    skill: str
    texts: list[str]
    index: FaissTopK | TorchTopK

    def candidates(self, query: AgentQuery, k: int, exclude: set[str]) -> list[tuple[str, float]]:
        """The k best pool texts for the query, best first, none of `exclude`."""
        scores, rows = self.index.search(query.vector[None, :], k + len(exclude))
        found = [(self.texts[r], float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]
        return [(text, score) for text, score in found if text not in exclude][:k]


def build_agents(pool: Sequence[PoolUtterance], encoder: Encoder, method: str = "auto") -> dict[str, SkillAgent]:
    by_skill: dict[str, list[str]] = {}
    for item in pool:
        by_skill.setdefault(item.skill, []).append(item.text)
    agents = {}
    for skill in sorted(by_skill):
        vectors = normalise_rows(np.asarray(encoder.encode(by_skill[skill]), dtype=np.float32))
        agents[skill] = SkillAgent(skill, by_skill[skill], ranker(vectors, method))
    return agents


# --- the skill side -------------------------------------------------------------------------------


def kl_divergence(p: Sequence[float], q: Sequence[float], epsilon: float = KL_EPSILON) -> float:
    """KL(p || q) in nats, both smoothed by `epsilon` and renormalised so a zero stays finite;
    exactly 0 for equal distributions."""
    p = np.asarray(p, dtype=np.float64) + epsilon
    q = np.asarray(q, dtype=np.float64) + epsilon
    p, q = p / p.sum(), q / q.sum()
    return max(0.0, float(np.sum(p * np.log(p / q))))


# --- the loop ---------------------------------------------------------------------------------------


@dataclass
class BotsTalkConfig:
    alpha: float = 6.0  # nats; fits the example skill classifier (docs/tasks/botstalk.md)
    turns: int = 6
    top_k: int = 5
    nli_threshold: float = 0.5
    context_weight: float = 0.5
    seed: int = 13


@dataclass
class GeneratedTurn:
    text: str
    skill: str
    distribution: list[float]
    passed_mic: bool
    kl_from_previous: float | None
    refused: int  # candidates the moderator refused this turn, all agents


@dataclass
class Diagnostics:
    """The paper's figures for a run: refusals per context type, KL between consecutive turns."""

    checked: Counter = field(default_factory=Counter)  # context type -> candidates judged against it
    refused: Counter = field(default_factory=Counter)  # context type -> candidates it refused
    candidates: int = 0
    refused_candidates: int = 0
    kls: list[float] = field(default_factory=list)
    offered_kls: list[float] = field(default_factory=list)  # KL of every other agent's proposal
    turns_by_skill: Counter = field(default_factory=Counter)
    passes: int = 0
    turns: int = 0
    dialogues: int = 0
    ended_early: int = 0

    def summary(self) -> dict:
        return {
            "dialogues": self.dialogues,
            "turns": self.turns,
            "turns_by_skill": dict(sorted(self.turns_by_skill.items())),
            "mic_passes": self.passes,
            "mic_pass_share": round(self.passes / max(1, self.turns - self.dialogues), 4),
            "ended_early": self.ended_early,
            "candidates_judged": self.candidates,
            "candidates_refused": self.refused_candidates,
            "refused_share": round(self.refused_candidates / self.candidates, 4) if self.candidates else 0.0,
            "refused_share_by_context": {
                kind: round(self.refused[kind] / n, 4) for kind, n in sorted(self.checked.items())
            },
            "refused_by_context": {kind: self.refused[kind] for kind in sorted(self.checked)},
            "kl_consecutive": kl_summary(self.kls),
            "kl_offered": kl_summary(self.offered_kls),
        }


def kl_summary(values: Sequence[float]) -> dict:
    """Quantiles, mean and a fixed-bin histogram of KL values (bins' upper edges; "inf" last)."""
    if not values:
        return {"count": 0}
    data = np.asarray(values, dtype=np.float64)
    counts, _ = np.histogram(data, bins=np.asarray(KL_BIN_EDGES))
    return {
        "count": len(data),
        "mean": round(float(data.mean()), 6),
        "quantiles": {f"p{int(q * 100)}": round(float(np.quantile(data, q)), 6) for q in KL_QUANTILES},
        "histogram": {
            "edges": [e if math.isfinite(e) else "inf" for e in KL_BIN_EDGES],
            "counts": [int(c) for c in counts],
        },
    }


@dataclass
class _Proposal:
    skill: str
    text: str
    distribution: np.ndarray


class BotsTalk:
    def __init__(
        self,
        agents: dict[str, Agent],
        encoder: Encoder,
        nli: NLI,
        skills: SkillClassifier,
        config: BotsTalkConfig,
    ):
        if not agents:
            raise ValueError("BotsTalk needs at least one skill agent")
        self.agents, self.encoder, self.nli, self.skills, self.config = agents, encoder, nli, skills, config
        self.diagnostics = Diagnostics()

    def generate(self, spec: DialogueContexts, index: int = 0) -> list[GeneratedTurn]:
        """One dialogue for `spec`; deterministic for a given seed and dialogue index."""
        rng = random.Random(f"{self.config.seed}:{index}:{spec.id}")
        active = spec.start_skill if spec.start_skill in self.agents else rng.choice(sorted(self.agents))
        context_vectors = self._context_vectors(spec)
        turns: list[GeneratedTurn] = []
        turn_vectors: list[np.ndarray] = []
        while len(turns) < self.config.turns:
            proposals, refused = self._proposals(spec, context_vectors, turn_vectors, [t.text for t in turns])
            chosen, passed = self._choose(active, proposals, turns[-1] if turns else None)
            if chosen is None:
                self.diagnostics.ended_early += 1
                break
            previous = np.asarray(turns[-1].distribution) if turns else None
            kl = kl_divergence(previous, chosen.distribution) if previous is not None else None
            turns.append(GeneratedTurn(chosen.text, chosen.skill, chosen.distribution.tolist(), passed, kl, refused))
            turn_vectors.append(self._encode([chosen.text])[0])
            active = chosen.skill
            self._count(turns[-1])
        self.diagnostics.dialogues += 1
        return turns

    def _count(self, turn: GeneratedTurn) -> None:
        self.diagnostics.turns += 1
        self.diagnostics.turns_by_skill[turn.skill] += 1
        self.diagnostics.passes += int(turn.passed_mic)
        if turn.kl_from_previous is not None:
            self.diagnostics.kls.append(turn.kl_from_previous)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return normalise_rows(np.asarray(self.encoder.encode(texts), dtype=np.float32))

    def _context_vectors(self, spec: DialogueContexts) -> dict[str, np.ndarray]:
        """Per context type, the mean vector of its texts."""
        return {kind: self._encode(texts).mean(axis=0) for kind, texts in spec.contexts.items()}

    def _query(self, skill, spec, context_vectors, turn_vectors, texts: list[str]) -> AgentQuery:
        recent = None
        if turn_vectors:
            recent = (decay_weights(len(turn_vectors))[:, None] * np.asarray(turn_vectors)).sum(axis=0)
        vector = self._pool_query(skill, context_vectors, recent)
        recent = None if recent is None else normalise_rows(recent[None, :].astype(np.float32))[0]
        own = context_vectors.get(skill)
        return AgentQuery(vector, list(texts), recent, own, list(spec.contexts.get(skill, [])))

    def _pool_query(self, skill: str, context_vectors: dict[str, np.ndarray], recent: np.ndarray | None):
        """The recent turns plus `context_weight` times the agent's own context (the context alone
        before the first turn; all contexts when the agent has none), unit length."""
        query = np.zeros(next(iter(context_vectors.values())).shape, dtype=np.float64)
        if recent is not None:
            query += recent
        own = context_vectors.get(skill)
        if own is not None:
            query += (self.config.context_weight if recent is not None else 1.0) * own
        elif recent is None:
            query += np.mean(list(context_vectors.values()), axis=0)
        return normalise_rows(query[None, :].astype(np.float32))[0]

    def _proposals(self, spec, context_vectors, turn_vectors, texts: list[str]) -> tuple[list[_Proposal], int]:
        """Each agent's best candidate that the moderator keeps, with its skill distribution."""
        used = set(texts)
        ranked = {
            skill: agent.candidates(
                self._query(skill, spec, context_vectors, turn_vectors, texts), self.config.top_k, used
            )
            for skill, agent in self.agents.items()
        }
        flat = [(skill, text) for skill, found in ranked.items() for text, _score in found]
        contradicting = self._moderate(spec, [text for _skill, text in flat])
        kept: dict[str, str] = {}
        for (skill, text), refused in zip(flat, contradicting, strict=True):
            if not refused and skill not in kept:
                kept[skill] = text
        skills = sorted(kept)
        distributions = self.skills.distributions([kept[s] for s in skills]) if skills else []
        proposals = [
            _Proposal(s, kept[s], np.asarray(d, dtype=np.float64)) for s, d in zip(skills, distributions, strict=True)
        ]
        return proposals, int(sum(contradicting))

    def _moderate(self, spec: DialogueContexts, candidates: list[str]) -> list[bool]:
        """Per candidate, whether any premise contradicts it; counts refusals per context type."""
        premises = spec.premises()
        if not candidates:
            return []
        pairs = [(kind, premise, text) for text in candidates for kind, premise in premises]
        probabilities = self.nli.contradiction_probabilities([p for _k, p, _t in pairs], [t for _k, _p, t in pairs])
        contradiction = np.asarray(probabilities).reshape(len(candidates), len(premises)) >= self.config.nli_threshold
        kinds = [kind for kind, _premise in premises]
        refused = []
        for row in contradiction:
            by_kind = dict.fromkeys(kinds, False)
            for kind, hit in zip(kinds, row, strict=True):
                by_kind[kind] |= bool(hit)
            for kind, hit in by_kind.items():
                self.diagnostics.checked[kind] += 1
                self.diagnostics.refused[kind] += int(hit)
            refused.append(any(by_kind.values()))
        self.diagnostics.candidates += len(candidates)
        self.diagnostics.refused_candidates += sum(refused)
        return refused

    def _choose(self, active: str, proposals: list[_Proposal], previous: GeneratedTurn | None):
        """(proposal, passed_mic): another agent's when its KL from the previous response is below
        alpha (the closest one), else the active agent's own; (None, False) when it has none."""
        own = next((p for p in proposals if p.skill == active), None)
        if previous is not None:
            before = np.asarray(previous.distribution)
            others = [(kl_divergence(before, p.distribution), p.skill, p) for p in proposals if p.skill != active]
            self.diagnostics.offered_kls.extend(kl for kl, _skill, _p in others)
            below = sorted((kl, skill, p) for kl, skill, p in others if kl < self.config.alpha)
            if below:
                return below[0][2], True
        return own, False
