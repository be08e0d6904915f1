"""The weak labeler: reading text,label files, the seed set, training on CPU, predicting, saving."""

import csv
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from annotation.taxonomy import LABEL_NAMES
from mlworkers.classifier.weak_labeler import WEAK_SEED
from mlworkers.ml.classifier.sentence_classifier import (
    LabeledFileError,
    LabeledSentence,
    WeakLabelerConfig,
    load_weak_labeler,
    read_labeled_sentences,
    top_k,
    train_weak_labeler,
)
from tests.mlworkers.tiny_models import write_tiny_encoder


@pytest.fixture(scope="module")
def seed_labeler():
    """The real thing: packaged MiniLM, frozen, a linear head trained on the seed set."""
    sentences = read_labeled_sentences(WEAK_SEED, LABEL_NAMES)
    return sentences, train_weak_labeler(sentences, LABEL_NAMES, WeakLabelerConfig(model_name="minilm", device="cpu"))


def test_the_seed_set_has_at_least_ten_original_sentences_per_label():
    sentences = read_labeled_sentences(WEAK_SEED, LABEL_NAMES)
    per_label = Counter(s.label for s in sentences)
    assert set(per_label) == set(LABEL_NAMES)
    assert min(per_label.values()) >= 10
    assert len({s.text for s in sentences}) == len(sentences) >= 410


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_it_reads_csv_and_matches_labels_case_insensitively(tmp_path):
    path = _write(tmp_path / "s.csv", 'text,label\n"Hello, you.",neutral\nI am so sad,Sad\n\n')
    assert read_labeled_sentences(path, LABEL_NAMES) == [
        LabeledSentence("Hello, you.", "Neutral"),
        LabeledSentence("I am so sad", "Sad"),
    ]


def test_it_reads_json_lines(tmp_path):
    path = _write(tmp_path / "s.jsonl", json.dumps({"text": "Thanks!", "label": "Grateful"}) + "\n\n")
    assert read_labeled_sentences(path, LABEL_NAMES) == [LabeledSentence("Thanks!", "Grateful")]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.csv", "text,label\nfine,Sad\nwhat,Sleepy\n", r"bad\.csv:3: unknown label 'Sleepy'"),
        ("bad.csv", "text,label\nfine,Sad\n  ,Sad\n", r"bad\.csv:3: empty text"),
        ("bad.csv", "text,label\na,Sad,extra\n", r"bad\.csv:2: expected 2 columns"),
        ("bad.csv", "sentence,emotion\na,Sad\n", r"bad\.csv:1: the header must be 'text,label'"),
        ("bad.jsonl", '{"text": "a", "label": "Sad"}\n{"text": oops}\n', r"bad\.jsonl:2: not valid JSON"),
        ("bad.jsonl", '["a", "Sad"]\n', r"bad\.jsonl:1: expected an object"),
        ("empty.csv", "text,label\n", r"empty\.csv: no labeled sentences"),
    ],
)
def test_a_bad_file_names_the_file_and_line(tmp_path, name, content, message):
    with pytest.raises(LabeledFileError, match=message):
        read_labeled_sentences(_write(tmp_path / name, content), LABEL_NAMES)


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(LabeledFileError, match="no such file"):
        read_labeled_sentences(tmp_path / "nope.csv", LABEL_NAMES)


@pytest.mark.slow
def test_the_seed_labeler_fits_its_seed_set_and_ranks_top_k_best_first(seed_labeler):
    sentences, labeler = seed_labeler
    sentences = sentences[::4]  # a quarter of every label's sentences keeps the test quick
    probabilities = labeler.predict_proba([s.text for s in sentences])
    assert probabilities.shape == (len(sentences), 41)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-4)
    predicted = [LABEL_NAMES[i] for i in probabilities.argmax(axis=1)]
    accuracy = np.mean([p == s.label for p, s in zip(predicted, sentences, strict=True)])
    assert accuracy > 0.8
    ranked = top_k(probabilities[:2], LABEL_NAMES, k=3)
    assert [len(row) for row in ranked] == [3, 3]
    assert ranked[0][0][0] == predicted[0]
    assert ranked[0][0][1] >= ranked[0][1][1] >= ranked[0][2][1]


@pytest.mark.slow
def test_a_saved_labeler_predicts_the_same_after_loading(seed_labeler, tmp_path):
    _, labeler = seed_labeler
    texts = ["Thank you for the lift home.", "Where did you put the keys?"]
    loaded = load_weak_labeler(labeler.save(tmp_path / "weak"))
    assert loaded.label_names == list(LABEL_NAMES)
    assert np.allclose(loaded.predict_proba(texts), labeler.predict_proba(texts), atol=1e-5)


def test_fine_tune_mode_trains_the_encoder_too_and_saves_it(tmp_path):
    encoder_dir = write_tiny_encoder(tmp_path / "tiny")
    sentences = [LabeledSentence(f"{word} {n}", label) for n in range(6) for word, label in
                 (("wonderful", "Joyful"), ("cellar", "Terrified"), ("noon", "Neutral"))]  # fmt: skip
    config = WeakLabelerConfig(model_name=str(encoder_dir), fine_tune=True, fine_tune_epochs=2, batch_size=6,
                               device="cpu")  # fmt: skip
    from mlworkers.ml import loading

    untouched = loading.load_encoder(str(encoder_dir)).state_dict()
    labeler = train_weak_labeler(sentences, LABEL_NAMES, config)
    changed = [k for k, v in labeler.encoder.state_dict().items() if not (v.cpu() == untouched[k]).all()]
    assert changed  # the encoder's weights moved
    saved = labeler.save(tmp_path / "weak")
    assert (saved / "encoder" / "config.json").exists()
    texts = ["wonderful 9", "noon 9"]
    assert np.allclose(load_weak_labeler(saved).predict_proba(texts), labeler.predict_proba(texts), atol=1e-5)


def test_it_writes_no_sentence_from_the_real_data(edos_csv):
    """The seed set is written for this project: no sentence of the EDOS file appears in it."""
    with edos_csv.open(newline="", encoding="utf-8", errors="replace") as handle:
        real = {cell.strip().lower() for row in csv.reader(handle) for cell in row if len(cell) > 20}
    ours = {s.text.strip().lower() for s in read_labeled_sentences(WEAK_SEED, LABEL_NAMES)}
    assert not ours & real
