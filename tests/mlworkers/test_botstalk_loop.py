"""The BotsTalk loop with hand-made models (pure, no database): the moderator's refusals, the
pass-the-mic rule at chosen alpha values, KL, the diagnostics, and the two exact rankers."""

import hashlib
import math

import numpy as np
import pytest

from mlworkers.ml.botstalk.agents import (
    BotsTalk,
    BotsTalkConfig,
    FaissTopK,
    TorchTopK,
    build_agents,
    kl_divergence,
    kl_summary,
    ranker,
)
from mlworkers.ml.botstalk.files import DialogueContexts, PoolUtterance


class WordHashEncoder:
    """Bag of words hashed into 64 dimensions: texts sharing words are close."""

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", "").replace(",", "").split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        return out


class SetNLI:
    """Contradiction (probability 1) exactly for the listed (premise, hypothesis) pairs."""

    def __init__(self, contradictions):
        self.contradictions = set(contradictions)
        self.calls = 0

    def contradiction_probabilities(self, premises, hypotheses):
        self.calls += 1
        pairs = zip(premises, hypotheses, strict=True)
        return np.array([1.0 if pair in self.contradictions else 0.02 for pair in pairs])


class TableSkills:
    """A skill distribution per text, looked up; the default by the text's pool skill."""

    skill_names = ["persona", "empathy"]

    def __init__(self, table):
        self.table = table

    def distributions(self, texts):
        return np.array([self.table[text] for text in texts], dtype=np.float32)


PERSONA = ["I have two dogs and a garden.", "My dogs love the garden.", "I never had a pet in my life."]
EMPATHY = ["That sounds lovely, you must be happy.", "I am sorry to hear that.", "That must be hard for you."]
POOL = [PoolUtterance(t, "persona") for t in PERSONA] + [PoolUtterance(t, "empathy") for t in EMPATHY]
SPEC = DialogueContexts("d1", {"persona": ["I have two dogs."], "empathy": ["I felt happy in my garden."]}, "persona")


def skills_table(persona=(0.9, 0.1), empathy=(0.1, 0.9)):
    return TableSkills({**dict.fromkeys(PERSONA, persona), **dict.fromkeys(EMPATHY, empathy)})


def talk(alpha, *, nli=None, skills=None, turns=4, top_k=3, seed=13):
    encoder = WordHashEncoder()
    agents = build_agents(POOL, encoder)
    config = BotsTalkConfig(alpha=alpha, turns=turns, top_k=top_k, seed=seed)
    return BotsTalk(agents, encoder, nli or SetNLI([]), skills or skills_table(), config)


def test_kl_is_zero_for_equal_distributions_and_matches_a_hand_computation():
    assert kl_divergence([0.3, 0.7], [0.3, 0.7]) == 0.0
    # KL((0.9, 0.1) || (0.5, 0.5)) = 0.9 ln 1.8 + 0.1 ln 0.2
    expected = 0.9 * math.log(1.8) + 0.1 * math.log(0.2)
    assert kl_divergence([0.9, 0.1], [0.5, 0.5]) == pytest.approx(expected, abs=1e-5)
    assert math.isfinite(kl_divergence([1.0, 0.0], [0.0, 1.0]))


def test_alpha_zero_never_passes_the_mic():
    bot = talk(0.0)
    turns = bot.generate(SPEC)
    assert len(turns) == 3  # persona has three utterances, then the active agent has nothing left
    assert {t.skill for t in turns} == {"persona"}
    assert not any(t.passed_mic for t in turns)
    assert bot.diagnostics.passes == 0 and bot.diagnostics.ended_early == 1


def test_a_large_alpha_passes_the_mic_at_every_turn_after_the_first():
    turns = talk(1000.0).generate(SPEC)
    assert [t.passed_mic for t in turns] == [False, True, True, True]
    assert [t.skill for t in turns] == ["persona", "empathy", "persona", "empathy"]


def test_the_mic_passes_exactly_when_kl_is_below_alpha():
    # persona says (0.9, 0.1); the empathy agent's proposal is (0.5, 0.5): KL = 0.3681 nats
    skills = skills_table(empathy=(0.5, 0.5))
    kl = kl_divergence([0.9, 0.1], [0.5, 0.5])
    assert kl == pytest.approx(0.3681, abs=1e-4)
    passed = talk(0.37, skills=skills, turns=2).generate(SPEC)
    kept = talk(0.36, skills=skills, turns=2).generate(SPEC)
    assert [t.skill for t in passed] == ["persona", "empathy"] and passed[1].passed_mic
    assert passed[1].kl_from_previous == pytest.approx(kl, abs=1e-6)
    assert [t.skill for t in kept] == ["persona", "persona"] and not kept[1].passed_mic
    bot = talk(0.36, skills=skills, turns=2)
    bot.generate(SPEC)
    assert bot.diagnostics.offered_kls == [pytest.approx(kl, abs=1e-6)]  # the one offer it turned down


def test_the_moderator_refuses_a_candidate_that_contradicts_a_context():
    nli = SetNLI([("I have two dogs.", "I never had a pet in my life.")])
    bot = talk(0.0, nli=nli, turns=5)
    texts = [t.text for t in bot.generate(SPEC)]
    assert "I never had a pet in my life." not in texts
    assert len(texts) == 2  # the persona agent ran out of consistent candidates
    summary = bot.diagnostics.summary()
    assert summary["refused_by_context"] == {"empathy": 0, "persona": 3}  # judged at turns 1, 2, 3
    assert summary["refused_share_by_context"]["persona"] == pytest.approx(3 / summary["candidates_judged"])


def test_without_the_contradiction_the_same_candidate_is_spoken():
    texts = [t.text for t in talk(0.0, turns=5).generate(SPEC)]
    assert "I never had a pet in my life." in texts


def test_the_run_is_deterministic_for_a_seed_and_picks_a_start_skill_when_none_is_given():
    spec = DialogueContexts("d2", SPEC.contexts)
    first = [t.text for t in talk(1000.0, seed=5).generate(spec)]
    again = [t.text for t in talk(1000.0, seed=5).generate(spec)]
    assert first == again
    starts = {talk(1000.0, seed=seed).generate(spec)[0].skill for seed in range(12)}
    assert starts == {"persona", "empathy"}


def test_each_turn_keeps_its_skill_distribution_and_the_kl_from_the_previous_turn():
    bot = talk(1000.0)
    turns = bot.generate(SPEC)
    assert turns[0].kl_from_previous is None
    for before, after in zip(turns, turns[1:], strict=False):
        assert sum(after.distribution) == pytest.approx(1.0, abs=1e-6)
        assert after.kl_from_previous == pytest.approx(kl_divergence(before.distribution, after.distribution))
    summary = bot.diagnostics.summary()["kl_consecutive"]
    assert summary["count"] == 3 and sum(summary["histogram"]["counts"]) == 3


def test_kl_summary_quantiles_and_histogram():
    summary = kl_summary([0.0, 0.02, 0.3, 3.0, 20.0])
    assert summary["quantiles"]["p50"] == pytest.approx(0.3)
    assert summary["quantiles"]["p0"] == 0.0 and summary["quantiles"]["p100"] == 20.0
    # bins [0,.01) [.01,.05) [.05,.1) [.1,.25) [.25,.5) [.5,1) [1,2) [2,4) [4,8) [8,inf]
    assert summary["histogram"]["counts"] == [1, 1, 0, 0, 1, 0, 0, 1, 0, 1]
    assert kl_summary([]) == {"count": 0}


def test_faiss_and_torch_top_k_agree():
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(200, 16)).astype(np.float32)
    queries = rng.normal(size=(5, 16)).astype(np.float32)
    (f_scores, f_rows), (t_scores, t_rows) = (
        FaissTopK(vectors).search(queries, 7),
        TorchTopK(vectors).search(queries, 7),
    )
    assert np.array_equal(f_rows, t_rows)
    assert np.allclose(f_scores, t_scores, atol=1e-4)
    assert isinstance(ranker(vectors), FaissTopK)  # faiss-cpu is installed here
    assert isinstance(ranker(vectors, "torch"), TorchTopK)
