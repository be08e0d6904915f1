"""The fastText baseline trains from a temporary __label__ file and predicts per label column."""

import numpy as np
import pytest

from mlworkers.ml.rounds.fasttext_baseline import (
    MIN_BUCKETS,
    FastTextConfig,
    bucket_count,
    dialogue_text,
    load_fasttext,
    train_fasttext,
)

LABELS = ["Joyful", "Sad", "Neutral", "Furious"]
TRAIN = (
    [(["hi", f"we are so happy today {n}"], "Joyful") for n in range(12)]
    + [(["hey", f"i cry tears of grief {n}"], "Sad") for n in range(12)]
    + [(["ok", f"the table is by the door {n}"], "Neutral") for n in range(12)]
)


@pytest.fixture(scope="module")
def model():
    dialogues, labels = zip(*TRAIN, strict=True)
    return train_fasttext(list(dialogues), list(labels), LABELS, FastTextConfig(epochs=40))


def test_it_learns_a_separable_toy_task(model):
    probabilities = model.predict_proba([["so", "happy happy"], ["tears", "grief"], ["table", "door"]])
    assert probabilities.shape == (3, len(LABELS))
    assert [LABELS[i] for i in probabilities.argmax(axis=1)] == ["Joyful", "Sad", "Neutral"]


def test_a_label_never_trained_gets_probability_zero(model):
    assert model.predict_proba([["anything at all"]])[0, LABELS.index("Furious")] == 0.0


def test_a_saved_model_predicts_the_same(model, tmp_path):
    loaded = load_fasttext(model.save(tmp_path / "ft"))
    batch = [["we are happy"], ["the door"]]
    assert np.allclose(loaded.predict_proba(batch), model.predict_proba(batch))


def test_turns_become_one_line_with_a_visible_separator():
    assert dialogue_text(["Hello\nthere", "  yes "]) == "Hello there | yes"


def test_it_refuses_an_empty_training_set():
    with pytest.raises(ValueError):
        train_fasttext([], [], LABELS)


def test_a_small_training_set_gets_a_small_model(model, tmp_path):
    # fastText's default 2,000,000 buckets made a 382 MB file for 24 dialogues
    folder = model.save(tmp_path / "ft")
    size = (folder / "fasttext.bin").stat().st_size
    assert model.config.bucket == MIN_BUCKETS
    assert size < 1_000_000
    assert model.hyperparameters()["bucket"] == MIN_BUCKETS


def test_the_bucket_count_follows_the_distinct_word_ngrams():
    lines = [f"w{n} x{n} y{n} z{n}" for n in range(2000)]  # 3 distinct bigrams each: 6000
    assert bucket_count(lines, word_ngrams=2) == 8192
    assert bucket_count(lines * 3, word_ngrams=2) == 8192  # repeats are not new n-grams
    assert bucket_count(lines, word_ngrams=3) == 16384  # + 4000 trigrams
    assert bucket_count(["just one"], word_ngrams=2) == MIN_BUCKETS
    assert bucket_count(lines, word_ngrams=1) == 0  # no n-grams to hash


def test_a_given_bucket_count_is_kept():
    dialogues, labels = zip(*TRAIN, strict=True)
    chosen = train_fasttext(list(dialogues), list(labels), LABELS, FastTextConfig(epochs=2, bucket=4096))
    assert chosen.config.bucket == 4096 == chosen.model.f.getArgs().bucket
