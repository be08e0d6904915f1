"""The decaying dialogue embedding and the file-backed turn embedding store."""

import numpy as np
import pytest

from mlworkers.ml.expansion.embeddings import (
    EmbeddingStore,
    decay_weights,
    dialogue_embedding,
    dialogue_embeddings,
    write_embeddings,
)


def test_three_turns_weigh_one_two_and_four_sevenths_last_turn_heaviest():
    assert decay_weights(3) == pytest.approx([1 / 7, 2 / 7, 4 / 7])


def test_weights_halve_going_back_and_sum_to_one():
    weights = decay_weights(5)
    assert weights.sum() == pytest.approx(1.0)
    assert weights[:-1] == pytest.approx(weights[1:] / 2)


def test_a_single_turn_dialogue_is_its_turn():
    vector = np.array([[0.2, -0.4, 1.0]], dtype=np.float32)
    assert dialogue_embedding(vector) == pytest.approx(vector[0])


def test_the_dialogue_embedding_is_the_weighted_mean_of_its_turns():
    turns = np.array([[7.0, 0.0], [0.0, 7.0], [7.0, 7.0]])
    # 1/7 * (7, 0) + 2/7 * (0, 7) + 4/7 * (7, 7) = (1 + 4, 2 + 4)
    assert dialogue_embedding(turns) == pytest.approx([5.0, 6.0])


def test_dialogue_embeddings_are_normalised_and_follow_the_given_rows():
    turn_vectors = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]], dtype=np.float32)
    out = dialogue_embeddings(turn_vectors, [[2], [0, 1]])
    assert out[0] == pytest.approx([0.6, 0.8])
    assert out[1] == pytest.approx(np.array([1.0, 2.0]) / np.sqrt(5))
    assert np.linalg.norm(out, axis=1) == pytest.approx([1.0, 1.0])


def test_it_refuses_an_empty_dialogue():
    with pytest.raises(ValueError):
        decay_weights(0)


def test_the_store_writes_normalised_vectors_chunk_by_chunk_to_a_memmap(tmp_path):
    calls = []

    def encode(texts):
        calls.append(len(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    store = write_embeddings(
        EmbeddingStore(tmp_path / "store"), [10, 11, 12], ["a", "bbb", "cc"], encode, dim=2, chunk_size=2
    )
    assert calls == [2, 1]
    ids, vectors = store.load()
    assert isinstance(vectors, np.memmap)
    assert ids.tolist() == [10, 11, 12]
    assert vectors[1] == pytest.approx(np.array([3.0, 1.0]) / np.sqrt(10))
    assert not list((tmp_path / "store").glob("*.partial.npy"))


def test_a_store_with_fewer_texts_than_ids_is_refused_and_not_published(tmp_path):
    store = EmbeddingStore(tmp_path / "store")
    with pytest.raises(ValueError):
        write_embeddings(store, [1, 2], ["only one"], lambda t: np.ones((len(t), 2)), dim=2)
    assert not store.exists()
