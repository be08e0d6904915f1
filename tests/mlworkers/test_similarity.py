"""Threshold search: chunked matrix products (the reference) and FAISS range search agree with
brute force, on the threshold boundary too."""

import numpy as np
import pytest

from mlworkers.ml.expansion.embeddings import normalise_rows
from mlworkers.ml.expansion.similarity import (
    NO_MATCH,
    brute_force_matches,
    chunked_matches,
    faiss_matches,
    find_matches,
)


def _clustered(rng, centres, per_centre, noise):
    rows = [c + noise * rng.standard_normal((per_centre, centres.shape[1])) for c in centres]
    return normalise_rows(np.vstack(rows).astype(np.float32))


@pytest.fixture
def vectors():
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((12, 32))
    gold = _clustered(rng, centres, 3, 0.15)
    unlabeled = _clustered(rng, centres, 40, 0.25)
    unlabeled = np.vstack([unlabeled, normalise_rows(rng.standard_normal((100, 32)))])  # mostly no match
    return unlabeled, gold


@pytest.mark.parametrize("threshold", [0.8, 0.9, 0.95])
def test_chunked_and_faiss_agree_with_brute_force(vectors, threshold):
    unlabeled, gold = vectors
    expected = brute_force_matches(unlabeled, gold, threshold)
    assert 0 < len(expected.matched_rows()) < len(unlabeled)  # the case is not trivial
    for found in (
        chunked_matches(unlabeled, gold, threshold, chunk_size=17, gold_chunk_size=5),
        faiss_matches(unlabeled, gold, threshold, chunk_size=23),
    ):
        assert found.gold_index.tolist() == expected.gold_index.tolist()
        matched = expected.matched_rows()
        assert found.similarity[matched] == pytest.approx(expected.similarity[matched], abs=1e-5)


def test_the_most_similar_gold_wins_and_exact_ties_go_to_the_lower_index():
    gold = normalise_rows(np.array([[1.0, 0.0], [0.8, 0.6], [1.0, 0.0]], dtype=np.float32))
    unlabeled = normalise_rows(np.array([[0.9, 0.1], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32))
    for search in (brute_force_matches, chunked_matches, faiss_matches):
        found = search(unlabeled, gold, 0.9)
        assert found.gold_index.tolist() == [0, 1, NO_MATCH], search.__name__


def test_a_similarity_equal_to_the_threshold_matches_in_every_search():
    gold = np.array([[1.0, 0.0]], dtype=np.float32)
    unlabeled = np.array([[0.75, np.sqrt(1 - 0.75**2)]], dtype=np.float32)
    threshold = float(unlabeled[0] @ gold[0])
    for method in ("brute", "chunked", "faiss"):
        assert find_matches(unlabeled, gold, threshold, method=method).gold_index.tolist() == [0], method


def test_chunked_search_works_on_a_memmap(tmp_path, vectors):
    unlabeled, gold = vectors
    path = tmp_path / "unlabeled.npy"
    np.save(path, unlabeled)
    mapped = np.load(path, mmap_mode="r")
    found = chunked_matches(mapped, gold, 0.9, chunk_size=64)
    assert found.gold_index.tolist() == brute_force_matches(unlabeled, gold, 0.9).gold_index.tolist()


def test_no_gold_means_no_match_and_unknown_methods_are_refused(vectors):
    unlabeled, _ = vectors
    empty = np.zeros((0, unlabeled.shape[1]), dtype=np.float32)
    assert (faiss_matches(unlabeled, empty, 0.5).gold_index == NO_MATCH).all()
    assert (chunked_matches(unlabeled, empty, 0.5).gold_index == NO_MATCH).all()
    with pytest.raises(ValueError, match="unknown search method"):
        find_matches(unlabeled, empty, 0.5, method="annoy")
