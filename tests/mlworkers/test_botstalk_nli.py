"""The moderator's NLI: a hub-style sequence-classification model (here a tiny random one saved
locally with MNLI's label names) and the small pair classifier, saved and loaded back."""

import numpy as np
import pytest
import torch

from mlworkers.ml import loading
from mlworkers.ml.botstalk.files import NLIPair
from mlworkers.ml.botstalk.nli import (
    CrossEncoderNLI,
    PairClassifier,
    PairClassifierConfig,
    load_nli,
    train_pair_classifier,
)
from tests.mlworkers.tiny_models import one_torch_thread, tiny_encoder_path


@pytest.fixture(autouse=True)
def _one_thread():
    yield from one_torch_thread()


def write_tiny_nli(directory, labels):
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = loading.load_tokenizer("minilm")
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def test_a_sequence_classification_model_with_a_contradiction_label_is_a_moderator(tmp_path):
    # roberta-large-mnli names its labels CONTRADICTION, NEUTRAL, ENTAILMENT
    path = write_tiny_nli(tmp_path / "mnli", ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"])
    nli = load_nli(path)
    assert isinstance(nli, CrossEncoderNLI) and nli.column == 0
    probabilities = nli.contradiction_probabilities(["I have a dog."] * 3, ["I have no pet.", "Hi.", "Dogs bark."])
    assert probabilities.shape == (3,) and np.all((probabilities > 0) & (probabilities < 1))
    with torch.inference_mode():
        full = nli.model(**nli.tokenizer(["I have a dog."], ["Hi."], return_tensors="pt")).logits.softmax(-1)
    assert probabilities[1] == pytest.approx(float(full[0, 0]), abs=1e-5)


def test_a_model_without_a_contradiction_label_is_refused_with_its_labels(tmp_path):
    path = write_tiny_nli(tmp_path / "sentiment", ["negative", "positive"])
    with pytest.raises(ValueError, match="no 'contradiction' label.*negative, positive"):
        load_nli(path)


def test_the_pair_classifier_fits_its_pairs_and_loads_back_the_same(tmp_path):
    pairs = [
        NLIPair("I have two dogs.", "I never had a pet.", "contradiction"),
        NLIPair("I have two dogs.", "My dogs are asleep.", "entailment"),
        NLIPair("I play the piano.", "I never touched a piano.", "contradiction"),
        NLIPair("I play the piano.", "I play jazz on the piano.", "entailment"),
        NLIPair("I play the piano.", "The weather is cold.", "neutral"),
        NLIPair("I have two dogs.", "The weather is cold.", "neutral"),
    ]
    model = train_pair_classifier(pairs, PairClassifierConfig(model_name=tiny_encoder_path(), epochs=400))
    premises, hypotheses = [p.premise for p in pairs], [p.hypothesis for p in pairs]
    predicted = [model.label_names[i] for i in model.predict_proba(premises, hypotheses).argmax(axis=1)]
    assert predicted == [p.label for p in pairs]
    model.save(tmp_path / "nli")
    loaded = load_nli(str(tmp_path / "nli"))
    assert isinstance(loaded, PairClassifier) and loaded.label_names == ["contradiction", "entailment", "neutral"]
    assert np.allclose(
        loaded.contradiction_probabilities(premises, hypotheses),
        model.contradiction_probabilities(premises, hypotheses),
        atol=1e-6,
    )
