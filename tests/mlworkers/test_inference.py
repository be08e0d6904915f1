"""Batched inference: length-sorted batches, per-batch padding, results back in the caller's order."""

import numpy as np
import pytest

from mlworkers.ml.classifier.dialogue_classifier import build_classifier
from mlworkers.ml.classifier.inference import (
    collate,
    encode_examples,
    length_sorted_batches,
    predict_examples,
    predict_stream,
    predict_texts,
    top_k,
)
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig
from tests.mlworkers.tiny_models import TOY_LABELS, one_torch_thread, tiny_encoder_path

single_thread = pytest.fixture(autouse=True)(one_torch_thread)

DIALOGUES = [
    ["Hi."],
    ["Did you lock the back door before we left?", "I think so.", "You think so? Go and check, please."],
    ["Fine."],
    ["We could take the coast road, it is longer but the view is worth every extra minute of it."],
    ["Who was that?", "Nobody."],
    ["What time does the last ferry leave the harbour tonight, do you know?", "Eleven.", "Then we have time."],
    ["Okay."],
]


@pytest.fixture(scope="module")
def clf():
    return build_classifier(TOY_LABELS, TrainConfig(base_model=tiny_encoder_path(), device="cpu", seed=5))


@pytest.fixture(scope="module")
def examples():
    return [DialogueExample(turns) for turns in DIALOGUES]


def test_length_sorted_batches_cover_every_index_once_shortest_first():
    lengths = [5, 2, 9, 2, 7, 1, 3]
    batches = length_sorted_batches(lengths, batch_size=3)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    flat = [lengths[i] for i in np.concatenate(batches)]
    assert flat == sorted(lengths)
    assert [len(batch) for batch in batches] == [3, 3, 1]


def test_a_batch_is_padded_to_its_own_longest_input_only():
    batch = collate([([1, 5, 2], [0, 0, 0]), ([1, 2], [0, 0])], pad_id=0, decay=0.5)
    assert batch["input_ids"].shape == (2, 3)
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert batch["token_weights"].tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]


def test_inference_rounds_widths_up_to_a_multiple_of_eight():
    batch = collate([([1, 5, 2], [0, 0, 0]), ([1, 2], [0, 0])], pad_id=0, decay=0.5, pad_to_multiple_of=8)
    assert batch["input_ids"].shape == (2, 8)
    assert batch["attention_mask"].sum().item() == 5 and batch["token_weights"][:, 3:].sum().item() == 0


def test_sorted_inference_keeps_the_callers_order_and_equals_one_at_a_time(clf, examples):
    one_at_a_time = np.vstack([predict_examples(clf, [example], batch_size=1) for example in examples])
    sorted_batches = predict_examples(clf, examples, batch_size=3, sort_by_length=True)
    unsorted_batches = predict_examples(clf, examples, batch_size=3, sort_by_length=False)
    assert np.allclose(sorted_batches, one_at_a_time, atol=1e-5)
    assert np.allclose(unsorted_batches, one_at_a_time, atol=1e-5)
    assert np.allclose(sorted_batches.sum(axis=1), 1.0, atol=1e-5)
    # different inputs really give different rows, so a shuffled order would be caught
    assert not np.allclose(sorted_batches[0], sorted_batches[1])


def test_streaming_in_chunks_gives_the_same_rows(clf, examples):
    seen = []
    streamed = np.vstack(list(predict_stream(clf, iter(examples), chunk_size=3, batch_size=2, on_chunk=seen.append)))
    assert np.allclose(streamed, predict_examples(clf, examples), atol=1e-5)
    assert seen == [3, 6, 7]


def test_texts_are_classified_as_one_turn_dialogues(clf):
    texts = ["Hi.", "We could take the coast road."]
    assert np.allclose(predict_texts(clf, texts), predict_examples(clf, [DialogueExample([t]) for t in texts]))


def test_top_k_lists_the_best_labels_first():
    assert top_k(np.array([0.1, 0.6, 0.3]), ["a", "b", "c"], k=2) == [["b", 0.6], ["c", 0.3]]


def test_encoding_keeps_only_the_history_that_can_fit(clf):
    long_dialogue = DialogueExample([f"turn {i}" for i in range(500)])
    ((input_ids, turn_index),) = encode_examples([long_dialogue], clf.tokenizer, 100)
    assert len(input_ids) == 100 and turn_index[-1] < 100
