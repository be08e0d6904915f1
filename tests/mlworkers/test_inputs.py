"""Building the classifier's input: target first, history reversed, 100 tokens in all, turn indices."""

import pytest

from mlworkers.ml import loading
from mlworkers.ml.classifier.inference import encode_dialogue, encode_examples
from mlworkers.ml.classifier.inputs import build_input, turn_weights


@pytest.fixture(scope="module")
def tokenizer():
    return loading.load_tokenizer("minilm")


def ids(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_it_puts_the_target_first_and_the_history_in_reverse(tokenizer):
    turns = ["where were you", "at the station", "you could have called"]
    input_ids, turn_index = build_input(turns, tokenizer)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    expected = [cls, *ids(tokenizer, turns[2]), sep, *ids(tokenizer, turns[1]), sep, *ids(tokenizer, turns[0]), sep]
    assert input_ids == expected
    assert turn_index == [0] * 6 + [1] * 4 + [2] * 4
    assert tokenizer.decode(input_ids) == "[CLS] you could have called [SEP] at the station [SEP] where were you [SEP]"


def test_it_truncates_at_100_tokens_dropping_the_oldest_context_first(tokenizer):
    history = [f"old turn number {i} with a few more words in it" for i in range(30)]
    target = "the target turn survives"
    input_ids, turn_index = build_input([*history, target], tokenizer)
    assert len(input_ids) == len(turn_index) == 100
    assert input_ids[1 : 1 + len(ids(tokenizer, target))] == ids(tokenizer, target)
    assert input_ids[-1] == tokenizer.sep_token_id
    assert turn_index == sorted(turn_index)  # turns appear newest first
    assert max(turn_index) < 30  # the oldest turns were dropped


def test_it_truncates_a_target_longer_than_the_limit(tokenizer):
    input_ids, turn_index = build_input(["context", "word " * 300], tokenizer, max_tokens=100)
    assert len(input_ids) == 100
    assert set(turn_index) == {0}
    assert input_ids[-1] == tokenizer.sep_token_id


def test_the_limit_is_configurable(tokenizer):
    input_ids, _ = build_input(["a b c d e f g h", "i j k l"], tokenizer, max_tokens=8)
    assert len(input_ids) == 8


def test_turn_weights_decay_with_distance_from_the_target():
    assert turn_weights([0, 0, 1, 1, 2, 3], decay=0.5) == [1.0, 1.0, 0.5, 0.5, 0.25, 0.125]
    assert turn_weights([0, 1, 2], decay=1.0) == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("decay", [0, -0.5, 1.5])
def test_it_refuses_a_decay_outside_zero_to_one(decay):
    with pytest.raises(ValueError, match="decay"):
        turn_weights([0, 1], decay=decay)


def test_it_refuses_an_empty_dialogue(tokenizer):
    with pytest.raises(ValueError, match="at least one turn"):
        build_input([], tokenizer)


def test_encoding_a_whole_dialogue_equals_building_each_turns_input(tokenizer):
    turns = ["first line", "a second, longer line of dialogue", "third", "and the fourth one"]
    per_turn = [build_input(turns[: end + 1], tokenizer) for end in range(len(turns))]
    assert encode_dialogue(turns, tokenizer, 100) == per_turn


def test_batch_encoding_equals_building_each_input(tokenizer):
    from mlworkers.ml.classifier.model import DialogueExample

    dialogues = [["hello there", "general"], ["only one"], ["x " * 120, "long history before me"]]
    encoded = encode_examples([DialogueExample(turns) for turns in dialogues], tokenizer, 100)
    assert encoded == [build_input(turns, tokenizer) for turns in dialogues]
