"""The response model's training loop: it learns, it stops early, it resumes, and perplexity is right."""

import pytest
import torch
from torch import nn

from mlworkers.ml.generation.decoding import BeamSettings
from mlworkers.ml.generation.response_model import (
    EOS_ID,
    ModelConfig,
    Pair,
    ResponseTransformer,
    TrainSettings,
    encode_pair,
    encode_pairs,
    fit,
    generate,
    load_model,
    model_perplexity,
    pairs_of_dialogue,
    save_model,
    train_tokenizer,
)
from tests.mlworkers.tiny_models import one_torch_thread

TEN_PAIRS = [
    Pair(("hello there",), "hi how are you"),
    Pair(("where were you",), "at the harbour all night"),
    Pair(("did you see the letters",), "they burned in the garden"),
    Pair(("is it raining",), "no the sun is out"),
    Pair(("what time is it",), "almost midnight"),
    Pair(("are you coming",), "give me a minute"),
    Pair(("who was that",), "nobody you know"),
    Pair(("can you hear me",), "loud and clear"),
    Pair(("why are you late",), "the bridge was closed"),
    Pair(("do you trust him",), "not for a second"),
]
TINY = {
    "layers": 1,
    "heads": 2,
    "hidden": 32,
    "ffn": 64,
    "dropout": 0.0,
    "max_context_tokens": 16,
    "max_response_tokens": 10,
}


@pytest.fixture(autouse=True)
def _one_thread():
    yield from one_torch_thread()


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer([text for pair in TEN_PAIRS for text in (*pair.context, pair.response)], 200)


def test_pairs_of_a_dialogue_are_each_turn_after_the_first_with_the_turns_before():
    assert pairs_of_dialogue(["a", "b", "c"]) == [Pair(("a",), "b"), Pair(("a", "b"), "c")]


def test_the_context_is_cut_from_the_left_and_the_target_ends_with_eos(tokenizer):
    config = ModelConfig(vocab_size=tokenizer.get_vocab_size(), max_context_tokens=3, max_response_tokens=4)
    source, target = encode_pair(
        Pair(("hello there", "where were you"), "they burned in the garden"), tokenizer, config
    )
    assert source == tokenizer.encode("where were you").ids[-3:]
    assert len(target) == 4 and target[-1] == EOS_ID


class Uniform(nn.Module):
    def __init__(self, vocab: int):
        super().__init__()
        self.vocab = vocab

    def forward(self, source, target_in):
        return torch.zeros(*target_in.shape, self.vocab)


def test_the_perplexity_of_a_uniform_model_equals_the_vocabulary_size(tokenizer):
    vocab = tokenizer.get_vocab_size()
    encoded = encode_pairs(TEN_PAIRS, tokenizer, ModelConfig(vocab_size=vocab, **TINY))
    assert model_perplexity(Uniform(vocab), encoded) == pytest.approx(vocab, rel=1e-4)


def test_a_tiny_model_overfits_ten_pairs(tokenizer):
    torch.manual_seed(0)
    config = ModelConfig(vocab_size=tokenizer.get_vocab_size(), **TINY)
    model = ResponseTransformer(config)
    encoded = encode_pairs(TEN_PAIRS, tokenizer, config)
    before = model_perplexity(model, encoded)
    state = fit(model, encoded, encoded, TrainSettings(max_epochs=60, patience=60, lr=1e-2, batch_size=10))
    after = model_perplexity(model, encoded)
    assert before > 20 and after < 1.2, (before, after, state.history[-1])
    reply = generate(model, encoded[1][0], BeamSettings(beam_size=4, max_length=12))
    assert tokenizer.decode(reply) == "at the harbour all night"


def test_training_stops_once_validation_stops_improving_and_keeps_the_best_epoch(tokenizer):
    torch.manual_seed(0)
    config = ModelConfig(vocab_size=tokenizer.get_vocab_size(), **TINY)
    train = encode_pairs(TEN_PAIRS[:8], tokenizer, config)
    validation = encode_pairs(TEN_PAIRS[8:], tokenizer, config)  # unseen: it overfits fast and worsens
    state = fit(ResponseTransformer(config), train, validation, TrainSettings(max_epochs=200, patience=3, lr=3e-3))
    assert state.stopped and state.epoch < 200
    assert state.epoch == state.best_epoch + 3
    losses = [row["validation_loss"] for row in state.history]
    assert min(losses) == losses[state.best_epoch - 1]


def test_a_run_resumed_at_an_epoch_boundary_ends_like_an_unbroken_one(tokenizer):
    config = ModelConfig(vocab_size=tokenizer.get_vocab_size(), **TINY)
    encoded = encode_pairs(TEN_PAIRS, tokenizer, config)
    settings = TrainSettings(max_epochs=4, patience=10, lr=3e-3, batch_size=4)
    torch.manual_seed(1)
    whole = fit(ResponseTransformer(config), encoded, encoded, settings)
    saved = []

    def stop_after_two(state):
        if state.epoch == 2:
            saved.append(torch.load(_roundtrip(state), weights_only=False))
            raise KeyboardInterrupt

    torch.manual_seed(1)
    with pytest.raises(KeyboardInterrupt):
        fit(ResponseTransformer(config), encoded, encoded, settings, on_epoch=stop_after_two)
    resumed = fit(ResponseTransformer(config), encoded, encoded, settings, state=saved[0])
    assert [row["validation_loss"] for row in resumed.history] == pytest.approx(
        [row["validation_loss"] for row in whole.history], abs=1e-3
    )


def _roundtrip(state):
    import io

    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return buffer


def test_a_saved_model_loads_with_its_tokenizer(tokenizer, tmp_path):
    config = ModelConfig(vocab_size=tokenizer.get_vocab_size(), **TINY)
    model = ResponseTransformer(config)
    save_model(model, tokenizer, tmp_path / "m")
    loaded, loaded_tokenizer = load_model(tmp_path / "m")
    encoded = encode_pairs(TEN_PAIRS, loaded_tokenizer, config)
    assert model_perplexity(loaded, encoded) == pytest.approx(model_perplexity(model, encoded))
