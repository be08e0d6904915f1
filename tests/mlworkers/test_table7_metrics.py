"""Table 7's pure pieces: Distinct-n, SES, perplexity and beam search with 4-gram blocking."""

import math
import random

import numpy as np
import pytest
import torch

from mlworkers.ml.generation.decoding import BeamSettings, beam_search, blocked_tokens, has_repeated_ngram
from mlworkers.ml.generation.metrics import cosine_rows, distinct_n, perplexity, sentence_embedding_similarity


def test_distinct_1_and_2_on_a_hand_counted_example():
    responses = [["i", "am", "fine"], ["i", "am", "here", "i", "am"]]
    # unigrams: 8 in all, distinct {i, am, fine, here} = 4; bigrams: 2 + 4 = 6, distinct
    # {(i,am), (am,fine), (am,here), (here,i)} = 4 (no bigram across the two responses)
    assert distinct_n(responses, 1) == pytest.approx(4 / 8)
    assert distinct_n(responses, 2) == pytest.approx(4 / 6)


def test_distinct_n_of_responses_too_short_for_an_ngram_is_zero():
    assert distinct_n([["one"], []], 2) == 0.0


def test_it_refuses_distinct_0():
    with pytest.raises(ValueError, match="at least 1"):
        distinct_n([["a"]], 0)


def test_ses_is_the_mean_cosine_of_hand_made_embeddings():
    table = {"a": [1.0, 0.0], "b": [0.0, 2.0], "c": [1.0, 1.0]}

    def encode(texts):
        return np.array([table[text] for text in texts])

    # cos(a, a) = 1, cos(a, b) = 0, cos(c, a) = 1/sqrt(2)
    expected = (1 + 0 + 1 / math.sqrt(2)) / 3
    assert sentence_embedding_similarity(["a", "a", "c"], ["a", "b", "a"], encode) == pytest.approx(expected)


def test_ses_refuses_lists_of_different_lengths():
    with pytest.raises(ValueError, match="2 generated responses for 1"):
        sentence_embedding_similarity(["a", "b"], ["a"], lambda texts: np.ones((len(texts), 2)))


def test_a_zero_embedding_has_cosine_zero():
    assert cosine_rows(np.zeros((1, 3)), np.ones((1, 3))).tolist() == [0.0]


def test_perplexity_of_a_uniform_distribution_is_the_vocabulary_size():
    assert perplexity(10 * math.log(37), 10) == pytest.approx(37)


def test_blocked_tokens_are_those_that_would_repeat_a_4gram():
    # the tail (1, 2, 3) occurred before, followed by 4: appending 4 would repeat (1, 2, 3, 4)
    assert blocked_tokens([1, 2, 3, 4, 9, 1, 2, 3], 4) == {4}
    assert blocked_tokens([1, 2, 3], 4) == set()


def test_beam_search_with_4gram_blocking_never_repeats_a_4gram():
    vocab, eos = 6, 5
    # a model that loves to loop 1 2 3 1 2 3 ... and never wants to stop
    loop = {0: 1, 1: 2, 2: 3, 3: 1, 4: 1}

    def step(prefixes):
        out = torch.full((prefixes.shape[0], vocab), -9.0)
        for row, last in enumerate(prefixes[:, -1].tolist()):
            out[row, loop[last]] = -0.01
        return torch.log_softmax(out, dim=-1)

    unblocked = beam_search(step, 0, eos, BeamSettings(beam_size=4, max_length=20, block_ngram=0))
    assert has_repeated_ngram(unblocked, 4)
    blocked = beam_search(step, 0, eos, BeamSettings(beam_size=4, max_length=20, block_ngram=4))
    assert len(blocked) >= 4 and not has_repeated_ngram(blocked, 4)


def test_beam_search_never_repeats_a_4gram_under_random_models():
    rng = random.Random(3)
    for trial in range(20):
        torch.manual_seed(trial)
        table = torch.log_softmax(torch.randn(5, 5) * 4, dim=-1)
        table[:, 4] = -30.0  # EOS (4) unlikely: long outputs, many chances to loop

        def step(prefixes, table=table):
            return table[prefixes[:, -1].clamp(max=3)]

        settings = BeamSettings(beam_size=rng.choice([1, 3, 8]), max_length=30, block_ngram=4)
        assert not has_repeated_ngram(beam_search(step, 0, 4, settings), 4)


def test_beam_search_finds_a_better_sequence_than_greedy():
    # greedy takes 1 (p .6) then must pay; beam sees 2 (p .4) then a certain EOS
    def step(prefixes):
        last = prefixes[0, -1].item() if prefixes.shape[1] > 1 else 0
        rows = []
        for last in prefixes[:, -1].tolist():
            if last == 0:
                rows.append([1e-9, 0.6, 0.4, 1e-9])
            elif last == 1:
                rows.append([1e-9, 0.3, 0.3, 0.4])
            else:
                rows.append([1e-9, 1e-9, 1e-9, 1.0])
        return torch.log(torch.tensor(rows))

    greedy = beam_search(step, 0, 3, BeamSettings(beam_size=1, max_length=5, length_penalty=0.0))
    beam = beam_search(step, 0, 3, BeamSettings(beam_size=4, max_length=5, length_penalty=0.0))
    assert greedy[0] == 1 and beam == [2]
