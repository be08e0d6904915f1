"""The dialogue classifier: weighting before positions, training keeps the best epoch, save/load."""

import numpy as np
import pytest
import torch

from mlworkers.ml.classifier.dialogue_classifier import (
    build_classifier,
    evaluate,
    load_classifier,
    predict_proba,
    train,
)
from mlworkers.ml.classifier.inference import collate, encode_examples
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig
from tests.mlworkers.tiny_models import TOY_DIALOGUES, TOY_LABELS, one_torch_thread, tiny_encoder_path

single_thread = pytest.fixture(autouse=True)(one_torch_thread)


@pytest.fixture(scope="module")
def tiny_encoder():
    return tiny_encoder_path()


@pytest.fixture(scope="module")
def toy_examples():
    return [DialogueExample(list(turns), label) for turns, label in TOY_DIALOGUES]


def tiny_config(tiny_encoder, **overrides):
    values = {"base_model": tiny_encoder, "device": "cpu", "lr": 3e-3, "epochs": 6, "batch_size": 4, "seed": 3}
    return TrainConfig(**{**values, **overrides})


def test_turn_weights_scale_word_embeddings_before_positions_are_added(tiny_encoder):
    clf = build_classifier(TOY_LABELS, tiny_config(tiny_encoder))
    model = clf.model.eval()
    batch = collate(
        encode_examples([DialogueExample(["an older turn", "the target turn"])], clf.tokenizer, 100),
        clf.tokenizer.pad_token_id,
        decay=0.5,
    )
    captured = {}
    model.encoder.embeddings.register_forward_hook(lambda module, args, output: captured.setdefault("out", output))
    with torch.inference_mode():
        model(**batch)
    embeddings = model.encoder.embeddings
    positions = torch.arange(batch["input_ids"].shape[1])
    words = embeddings.word_embeddings(batch["input_ids"]) * batch["token_weights"].unsqueeze(-1)
    expected = embeddings.LayerNorm(
        words
        + embeddings.position_embeddings(positions)
        + embeddings.token_type_embeddings(torch.zeros_like(positions))
    )
    assert torch.allclose(captured["out"], expected, atol=1e-5)
    # and the weights really reach the embeddings: history tokens are scaled, the target's are not
    assert batch["token_weights"][0].tolist()[:5] == [1.0, 1.0, 1.0, 1.0, 1.0]
    assert 0.5 in batch["token_weights"][0].tolist()


def test_context_weights_change_the_prediction(tiny_encoder):
    examples = [DialogueExample(["a long history turn about something else", "the target"])]
    weighted = build_classifier(TOY_LABELS, tiny_config(tiny_encoder, turn_weight_decay=0.5))
    unweighted = build_classifier(TOY_LABELS, tiny_config(tiny_encoder, turn_weight_decay=1.0))
    unweighted.model.load_state_dict(weighted.model.state_dict())
    assert not np.allclose(predict_proba(weighted, examples), predict_proba(unweighted, examples))


def test_training_lowers_the_loss_and_keeps_the_best_validation_epoch(tiny_encoder, toy_examples):
    steps = []
    clf = train(
        toy_examples[::2] + toy_examples[1::4],
        toy_examples[3::4],
        TOY_LABELS,
        tiny_config(tiny_encoder),
        progress=lambda done, total, message: steps.append((done, total)),
    )
    history = clf.history
    assert len(history) == 6
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    best = min(history, key=lambda record: record["val_loss"])
    assert clf.best_epoch == best["epoch"]
    # the weights in hand are the best epoch's: they score its validation loss again
    assert evaluate(clf, toy_examples[3::4])["loss"] == pytest.approx(best["val_loss"], abs=1e-5)
    assert steps[-1][0] == steps[-1][1]


def test_it_learns_the_toy_task(tiny_encoder, toy_examples):
    clf = train(toy_examples, [], TOY_LABELS, tiny_config(tiny_encoder, epochs=12))
    assert clf.best_epoch == 12  # no validation set: the last epoch is kept
    assert evaluate(clf, toy_examples)["accuracy"] >= 0.75


def test_save_and_load_give_the_same_probabilities(tiny_encoder, toy_examples, tmp_path):
    clf = train(toy_examples[:6], toy_examples[6:8], TOY_LABELS, tiny_config(tiny_encoder, epochs=1))
    clf.save(tmp_path / "saved")
    loaded = load_classifier(tmp_path / "saved", device="cpu")
    assert loaded.label_names == TOY_LABELS
    assert loaded.config == clf.config
    assert loaded.history == clf.history and loaded.best_epoch == clf.best_epoch
    assert np.allclose(predict_proba(loaded, toy_examples), predict_proba(clf, toy_examples), atol=1e-6)
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == [
        "classifier.json",
        "encoder",
        "model.safetensors",
        "tokenizer",
    ]


def test_it_names_an_example_with_an_unknown_label(tiny_encoder, toy_examples):
    bad = [*toy_examples[:2], DialogueExample(["hm"], "Bored")]
    with pytest.raises(ValueError, match=r"train example 2: label 'Bored'"):
        train(bad, [], TOY_LABELS, tiny_config(tiny_encoder, epochs=1))


def test_the_paper_defaults_are_the_config_defaults():
    config = TrainConfig()
    assert (config.lr, config.betas, config.eps, config.dropout, config.max_tokens) == (
        2e-5,
        (0.9, 0.98),
        1e-6,
        0.1,
        100,
    )
    assert TrainConfig.from_dict(config.to_dict()) == config


def test_it_refuses_an_unknown_schedule():
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(schedule="exponential")
