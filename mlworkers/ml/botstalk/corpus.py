"""BotsTalk agents that speak from the corpus: candidates are the responses of its interaction-response
pairs (SubTle pairs), retrieved by the dialogue so far and ranked for the agent's skill. Pure: no Django.

Retrieval: the bi-encoder embeds every distinct text of the pairs once; an exact inner-product
index over the interactions (FAISS, else torch: `botstalk.ranker`) finds the `shortlist` pairs
whose interaction is nearest the dialogue so far (turn vectors, weights halving going back; the
agent's own context before the first turn). A response already said in the dialogue is skipped,
and a response found under several interactions keeps its best score.

Ranking per skill, added to that similarity:
- every agent: `context_weight` x cosine(response, the agent's own skill context), when the
  dialogue's contexts give it one (persona and knowledge agents are ranked by this alone); the
  `finalists` best so far go on to the two model-based scores below (bounded cost per turn);
- an emotion agent (a skill named in `emotion_skills`) with a labeler (the dialogue classifier):
  `label_weight` x P(target label | dialogue so far + candidate), the target being the label the
  classifier gives the agent's own context (or the dialogue so far when it has none);
- a re-ranker, when given (e.g. a response model's log-likelihood): `rerank_weight` x its scores
  standardised over the shortlist. None by default.

The moderator and the mic see corpus agents exactly as they see pool agents (`botstalk.Agent`).
`choose_agents` falls back to the hand-written pool only when the corpus has no pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from mlworkers.ml.botstalk.agents import AgentQuery, Encoder, FaissTopK, TorchTopK, build_agents, ranker
from mlworkers.ml.botstalk.files import PoolUtterance, ResponsePair
from mlworkers.ml.expansion.embeddings import normalise_rows

CORPUS, POOL = "corpus", "pool"

# (dialogue so far, candidate responses) -> one score per candidate, higher is better
Reranker = Callable[[Sequence[str], Sequence[str]], Sequence[float]]


class Labeler(Protocol):
    """The dialogue classifier as the emotion agent uses it: a distribution over labels for the
    last turn of each dialogue (chronological turns)."""

    label_names: list[str]

    def probabilities(self, dialogues: Sequence[Sequence[str]]) -> np.ndarray: ...


@dataclass
class CorpusRanking:
    shortlist: int = 50  # pairs retrieved by interaction similarity before the skill ranking
    finalists: int = 10  # of those, the best by similarity and context that the labeler and re-ranker judge
    context_weight: float = 0.5
    label_weight: float = 0.5
    rerank_weight: float = 0.5
    emotion_skills: tuple[str, ...] = ("emotion", "empathy")


def distinct_pairs(pairs: Iterable[ResponsePair]) -> list[ResponsePair]:
    """Pairs with both sides non-empty after folding white space, each (interaction, response) once."""
    seen: dict[tuple[str, str], None] = {}
    for pair in pairs:
        key = (" ".join(pair.interaction.split()), " ".join(pair.response.split()))
        if all(key):
            seen.setdefault(key, None)
    return [ResponsePair(*key) for key in seen]


@dataclass
class ResponseCorpus:
    interactions: list[str]
    responses: list[str]
    response_vectors: np.ndarray
    index: FaissTopK | TorchTopK

    def __len__(self) -> int:
        return len(self.responses)

    def shortlist(self, probe: np.ndarray, k: int, exclude: set[str]) -> list[tuple[int, float]]:
        """(pair row, similarity of its interaction to `probe`), best first, each response text
        once, none of `exclude`; fewer than k when the corpus runs out."""
        wanted = min(len(self), k + len(exclude))
        found: dict[str, tuple[int, float]] = {}
        while True:
            scores, rows = self.index.search(probe[None, :], wanted)
            for score, row in zip(scores[0], rows[0], strict=True):
                text = self.responses[row] if row >= 0 else ""
                if text and text not in exclude and text not in found:
                    found[text] = (int(row), float(score))
            if len(found) >= k or wanted >= len(self):
                return list(found.values())[:k]
            wanted = min(len(self), wanted * 4)


def build_response_corpus(pairs: Iterable[ResponsePair], encoder: Encoder, method: str = "auto") -> ResponseCorpus:
    """Embeds each distinct text once (a turn is often one pair's response and the next's interaction)."""
    pairs = distinct_pairs(pairs)
    if not pairs:
        raise ValueError("no interaction-response pair to build a corpus from")
    texts = list(dict.fromkeys(text for pair in pairs for text in (pair.interaction, pair.response)))
    vectors = normalise_rows(np.asarray(encoder.encode(texts), dtype=np.float32))
    row = {text: i for i, text in enumerate(texts)}
    interactions = vectors[[row[p.interaction] for p in pairs]]
    responses = vectors[[row[p.response] for p in pairs]]
    return ResponseCorpus(
        [p.interaction for p in pairs], [p.response for p in pairs], responses, ranker(interactions, method)
    )


@dataclass
class CorpusAgent:
    skill: str
    corpus: ResponseCorpus
    ranking: CorpusRanking = field(default_factory=CorpusRanking)
    labeler: Labeler | None = None  # only an emotion agent ranks by label
    reranker: Reranker | None = None
    _targets: dict[tuple[str, ...], int] = field(default_factory=dict, repr=False)

    def candidates(self, query: AgentQuery, k: int, exclude: set[str]) -> list[tuple[str, float]]:
        """The k best responses for this agent's skill, best first, none of `exclude`."""
        probe = query.recent if query.recent is not None else query.vector
        found = self.corpus.shortlist(probe, max(k, self.ranking.shortlist), exclude)
        if not found:
            return []
        rows = [row for row, _score in found]
        scores = np.asarray([score for _row, score in found], dtype=np.float64) + self.context_scores(rows, query)
        best = np.argsort(-scores, kind="stable")[: max(k, self.ranking.finalists)]
        rows, scores = [rows[i] for i in best], scores[best]
        texts = [self.corpus.responses[row] for row in rows]
        scores += self.label_scores(texts, query) + self.rerank_scores(texts, query)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(texts[i], float(scores[i])) for i in order]

    def context_scores(self, rows: list[int], query: AgentQuery) -> np.ndarray:
        if query.context is None or not self.ranking.context_weight:
            return np.zeros(len(rows))
        own = normalise_rows(np.asarray(query.context, dtype=np.float32)[None, :])[0]
        return self.ranking.context_weight * (self.corpus.response_vectors[rows] @ own).astype(np.float64)

    def label_scores(self, texts: list[str], query: AgentQuery) -> np.ndarray:
        target = self.target_label(query)
        if target is None or not self.ranking.label_weight:
            return np.zeros(len(texts))
        probabilities = np.asarray(self.labeler.probabilities([[*query.turns, text] for text in texts]))
        return self.ranking.label_weight * probabilities[:, target].astype(np.float64)

    def target_label(self, query: AgentQuery) -> int | None:
        """The index of the label this agent aims for: the classifier's label of its own context,
        else of the dialogue so far; None when it ranks by no label."""
        if self.labeler is None or self.skill not in self.ranking.emotion_skills:
            return None
        basis = tuple(query.context_texts or query.turns)
        if not basis:
            return None
        if basis not in self._targets:
            self._targets[basis] = int(np.argmax(np.asarray(self.labeler.probabilities([list(basis)]))[0]))
        return self._targets[basis]

    def rerank_scores(self, texts: list[str], query: AgentQuery) -> np.ndarray:
        if self.reranker is None or not self.ranking.rerank_weight:
            return np.zeros(len(texts))
        values = np.asarray(self.reranker(list(query.turns), texts), dtype=np.float64)
        if values.shape != (len(texts),):
            raise ValueError(f"the re-ranker gave {values.shape} scores for {len(texts)} candidates")
        spread = values.std()
        return self.ranking.rerank_weight * ((values - values.mean()) / spread if spread > 0 else values * 0)


def build_corpus_agents(
    pairs: Iterable[ResponsePair],
    skills: Iterable[str],
    encoder: Encoder,
    ranking: CorpusRanking | None = None,
    labeler: Labeler | None = None,
    reranker: Reranker | None = None,
    method: str = "auto",
) -> dict[str, CorpusAgent]:
    """One agent per skill over one shared corpus index; only emotion skills get the labeler."""
    ranking = ranking or CorpusRanking()
    corpus = build_response_corpus(pairs, encoder, method)
    return {
        skill: CorpusAgent(skill, corpus, ranking, labeler if skill in ranking.emotion_skills else None, reranker)
        for skill in sorted(set(skills))
    }


def choose_agents(
    pairs: Sequence[ResponsePair],
    pool: Sequence[PoolUtterance],
    encoder: Encoder,
    ranking: CorpusRanking | None = None,
    labeler: Labeler | None = None,
    reranker: Reranker | None = None,
    method: str = "auto",
) -> tuple[dict, str]:
    """(agents, CORPUS) over the pairs, one agent per skill of the pool; (pool agents, POOL) only
    when no pair is usable."""
    if distinct_pairs(pairs):
        skills = {item.skill for item in pool}
        return build_corpus_agents(pairs, skills, encoder, ranking, labeler, reranker, method), CORPUS
    return build_agents(pool, encoder, method), POOL
