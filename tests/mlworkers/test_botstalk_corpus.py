"""BotsTalk agents that speak from the corpus (pure, no database): retrieval of the responses of
interaction-response pairs by the dialogue so far, the ranking per skill (context, the dialogue
classifier's label, a re-ranker hook), the pool as the fallback for an empty corpus only, the loop
with corpus agents (moderator unchanged), the pairs file, and the coherence figures."""

import json

import numpy as np
import pytest

from mlworkers.ml.botstalk.agents import AgentQuery, BotsTalk, BotsTalkConfig, SkillAgent
from mlworkers.ml.botstalk.coherence import contradiction_rate, mean_consecutive_similarity, random_turn_pairs
from mlworkers.ml.botstalk.corpus import (
    CORPUS,
    POOL,
    CorpusAgent,
    CorpusRanking,
    ResponsePair,
    build_corpus_agents,
    build_response_corpus,
    choose_agents,
)
from mlworkers.ml.botstalk.files import BotsTalkFileError, DialogueContexts, PoolUtterance, read_response_pairs
from mlworkers.ml.expansion.embeddings import normalise_rows
from tests.mlworkers.test_botstalk_loop import SetNLI, TableSkills, WordHashEncoder

PAIRS = [
    ResponsePair("Where is the dog tonight?", "The dog sleeps in the garden."),
    ResponsePair("Did you see the storm?", "The storm broke the old bridge."),
    ResponsePair("Do you like the harbour?", "I sail from the harbour every summer."),
    ResponsePair("How was the exam?", "I passed, I am so happy!"),
    ResponsePair("How was the exam?", "I failed, I feel terrible."),
]
SKILL_POOL = [PoolUtterance("I walk my dogs.", "persona"), PoolUtterance("That sounds lovely.", "empathy")]
ENCODER = WordHashEncoder()


def vector(text):
    return normalise_rows(np.asarray(ENCODER.encode([text]), dtype=np.float32))[0]


def query(turns=(), context=None, context_texts=()):
    recent = vector(" ".join(turns[-1:])) if turns else None
    own = vector(context) if context else None
    return AgentQuery(recent if recent is not None else own, list(turns), recent, own, list(context_texts))


class KeywordLabeler:
    """The dialogue classifier's stand-in: 'joy' when the last turn says happy, else 'sadness'."""

    label_names = ["joy", "sadness"]

    def __init__(self):
        self.seen = []

    def probabilities(self, dialogues):
        self.seen.extend(list(d) for d in dialogues)
        return np.array([[0.9, 0.1] if "happy" in d[-1].lower() else [0.2, 0.8] for d in dialogues])


def agent(skill="persona", pairs=PAIRS, **options):
    ranking = options.pop("ranking", CorpusRanking(shortlist=10))
    return CorpusAgent(skill, build_response_corpus(pairs, ENCODER), ranking, **options)


def test_it_answers_with_the_response_of_the_pair_whose_interaction_matches_the_dialogue():
    found = agent().candidates(query(["Where did the dog go tonight?"]), 1, set())
    assert found[0][0] == "The dog sleeps in the garden."
    storm = agent().candidates(query(["What a storm!", "Did you see the storm?"]), 1, set())
    assert storm[0][0] == "The storm broke the old bridge."


def test_it_never_offers_an_interaction_or_a_text_outside_the_responses():
    found = agent().candidates(query(["Where is the dog tonight?"]), 10, set())
    assert {text for text, _ in found} == {p.response for p in PAIRS}


def test_it_skips_a_response_already_said_in_the_dialogue():
    said = "The dog sleeps in the garden."
    found = agent().candidates(query(["Where is the dog tonight?"]), 2, {said})
    assert said not in [text for text, _ in found] and len(found) == 2


def test_a_response_under_two_interactions_is_offered_once():
    pairs = [*PAIRS, ResponsePair("Where is the cat?", "The dog sleeps in the garden.")]
    texts = [text for text, _ in agent(pairs=pairs).candidates(query(["Where is the dog?"]), 10, set())]
    assert len(texts) == len(set(texts)) == 5


def test_the_persona_and_knowledge_agents_rank_by_their_own_context():
    pairs = [
        ResponsePair("Tell me about you.", "I keep bees on my roof."),
        ResponsePair("Tell me about you.", "I repair old clocks."),
    ]
    turns = ["Tell me about you."]
    bees = agent(pairs=pairs).candidates(query(turns, "I keep bees.", ["I keep bees."]), 1, set())
    clocks = agent("knowledge", pairs).candidates(query(turns, "Old clocks need repair.", ["Old clocks."]), 1, set())
    assert bees[0][0] == "I keep bees on my roof." and clocks[0][0] == "I repair old clocks."


def test_the_emotion_agent_prefers_a_candidate_of_the_target_label():
    turns = ["How was the exam?"]
    labeler = KeywordLabeler()
    ranking = CorpusRanking(shortlist=10, context_weight=0.0, label_weight=1.0)
    happy_context = ["I was happy when I passed my driving test."]
    glad = agent("empathy", ranking=ranking, labeler=labeler).candidates(query(turns, None, happy_context), 1, set())
    assert glad[0][0] == "I passed, I am so happy!"
    sad_context = ["I cried when my grandmother died."]
    sad = agent("empathy", ranking=ranking, labeler=labeler).candidates(query(turns, None, sad_context), 1, set())
    assert sad[0][0] == "I failed, I feel terrible."
    assert ["How was the exam?", "I passed, I am so happy!"] in labeler.seen  # the candidate in its dialogue


def test_only_an_emotion_skill_ranks_by_the_label():
    agents = build_corpus_agents(PAIRS, ["persona", "empathy", "knowledge"], ENCODER, labeler=KeywordLabeler())
    assert agents["empathy"].labeler is not None
    assert agents["persona"].labeler is None and agents["knowledge"].labeler is None
    assert agents["persona"].corpus is agents["empathy"].corpus  # one index for all agents


def test_a_reranker_hook_reorders_the_candidates_and_is_none_by_default():
    ranking = CorpusRanking(shortlist=10, rerank_weight=10.0)
    exam = query(["How was the exam?"])
    plain = agent(ranking=ranking).candidates(exam, 1, set())[0][0]
    other = next(p.response for p in PAIRS[3:] if p.response != plain)  # the same interaction: a tie
    calls = []

    def prefer_other(turns, texts):
        calls.append((list(turns), list(texts)))
        return [5.0 if text == other else 0.0 for text in texts]

    reranked = agent(ranking=ranking, reranker=prefer_other).candidates(exam, 1, set())
    assert agent().reranker is None
    assert reranked[0][0] == other != plain
    assert calls[0][0] == ["How was the exam?"] and plain in calls[0][1]


def test_it_refuses_a_reranker_that_scores_the_wrong_number_of_candidates():
    broken = agent(reranker=lambda turns, texts: [1.0])
    with pytest.raises(ValueError, match="the re-ranker gave"):
        broken.candidates(query(["How was the exam?"]), 3, set())


def test_the_pool_is_the_fallback_for_an_empty_corpus_only():
    agents, source = choose_agents(PAIRS, SKILL_POOL, ENCODER)
    assert source == CORPUS and sorted(agents) == ["empathy", "persona"]
    assert all(isinstance(a, CorpusAgent) for a in agents.values())
    for empty in ([], [ResponsePair("  ", "Hello."), ResponsePair("Hi.", "")]):
        agents, source = choose_agents(empty, SKILL_POOL, ENCODER)
        assert source == POOL and all(isinstance(a, SkillAgent) for a in agents.values())


def test_it_refuses_to_build_a_corpus_from_no_pair():
    with pytest.raises(ValueError, match="no interaction-response pair"):
        build_response_corpus([ResponsePair("", "")], ENCODER)


def test_the_loop_with_corpus_agents_speaks_corpus_responses_and_the_moderator_still_refuses():
    spec = DialogueContexts(
        "d1", {"persona": ["I love my dog."], "empathy": ["I was happy after the exam."]}, "persona"
    )
    refused = "The dog sleeps in the garden."
    responses = {p.response for p in PAIRS}
    table = TableSkills(dict.fromkeys(responses, (0.9, 0.1)))
    agents = build_corpus_agents(PAIRS, ["persona", "empathy"], ENCODER)
    nli = SetNLI([("I love my dog.", refused)])
    talk = BotsTalk(agents, ENCODER, nli, table, BotsTalkConfig(alpha=0.0, turns=4, top_k=3))
    turns = talk.generate(spec)
    assert len(turns) == 4 and {t.text for t in turns} <= responses - {refused}
    assert len({t.text for t in turns}) == 4 and talk.diagnostics.refused_candidates > 0
    assert not any(t.passed_mic for t in turns)  # alpha 0: the mic rule is the same for corpus agents


def test_it_reads_an_extract_pairs_file_and_names_a_bad_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    good = {"interaction": "Where?", "response": "Here.", "file": "a.srt", "interaction_cue": 1, "response_cue": 2}
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({"interaction": "Who?"}) + "\n")
    with pytest.raises(BotsTalkFileError, match=rf"^{path}:3: missing 'response'"):
        read_response_pairs(path)
    path.write_text(json.dumps(good) + "\n")
    assert read_response_pairs(path) == [ResponsePair("Where?", "Here.")]


def test_coherence_is_higher_for_related_turns_and_contradictions_are_counted():
    related = [["The dog sleeps in the garden.", "The dog loves the garden."]]
    unrelated = [["The dog sleeps in the garden.", "Stocks fell on Monday."]]
    assert mean_consecutive_similarity(related, ENCODER) > mean_consecutive_similarity(unrelated, ENCODER)
    nli = SetNLI([("The dog sleeps in the garden.", "Stocks fell on Monday.")])
    assert contradiction_rate(related + unrelated, nli) == 0.5
    with pytest.raises(ValueError, match="two turns"):
        mean_consecutive_similarity([["alone"]], ENCODER)


def test_random_pairs_take_their_two_turns_from_two_dialogues():
    dialogues = [["a1", "a2"], ["b1", "b2"], ["c1"]]
    pairs = random_turn_pairs(dialogues, 50, seed=1)
    assert len(pairs) == 50 and pairs == random_turn_pairs(dialogues, 50, seed=1)
    assert all(first[0] != second[0] for first, second in pairs)


def test_the_labeler_judges_only_the_finalists():
    labeler = KeywordLabeler()
    ranking = CorpusRanking(shortlist=10, finalists=2)
    found = agent("empathy", ranking=ranking, labeler=labeler).candidates(query(["How was the exam?"]), 1, set())
    assert len(found) == 1
    assert len(labeler.seen) == 1 + 2  # the target (the dialogue so far), then two finalists
