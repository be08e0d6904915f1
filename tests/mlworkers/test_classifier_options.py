"""The dialogue classifier's training options beyond the paper: soft targets from the crowd's
votes, layer-wise learning-rate decay, an EMA of the weights and R-Drop."""

import numpy as np
import pytest
import torch
from torch import nn

from mlworkers.ml.classifier.dialogue_classifier import build_classifier, evaluate, target_distributions, train
from mlworkers.ml.classifier.model import DialogueExample, TrainConfig
from mlworkers.ml.classifier.training_step import WeightAverage, parameter_groups, soft_cross_entropy, symmetric_kl
from tests.mlworkers import tiny_models
from tests.mlworkers.tiny_models import TOY_DIALOGUES, TOY_LABELS, one_torch_thread

single_thread = pytest.fixture(autouse=True)(one_torch_thread)


tiny_config = tiny_models.toy_config


# --- soft targets ---------------------------------------------------------------------------


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_soft_cross_entropy_equals_cross_entropy_for_one_hot_targets(smoothing):
    torch.manual_seed(0)
    logits, labels = torch.randn(5, 4), torch.tensor([0, 3, 1, 1, 2])
    expected = nn.CrossEntropyLoss(label_smoothing=smoothing)(logits, labels)
    one_hot = nn.functional.one_hot(labels, 4).float()
    assert soft_cross_entropy(logits, one_hot, smoothing).item() == pytest.approx(expected.item(), rel=1e-6)


def test_soft_cross_entropy_of_a_vote_split_is_the_mean_of_the_votes_losses():
    logits = torch.tensor([[2.0, 0.5, -1.0]])
    log_probs = torch.log_softmax(logits, dim=-1)[0]
    loss = soft_cross_entropy(logits, torch.tensor([[2 / 3, 1 / 3, 0.0]]))
    assert loss.item() == pytest.approx(-(2 * log_probs[0] + log_probs[1]).item() / 3, rel=1e-6)


def test_soft_cross_entropy_keeps_float32_for_half_precision_logits():
    logits = torch.randn(3, 4).to(torch.bfloat16)
    assert soft_cross_entropy(logits, torch.full((3, 4), 0.25)).dtype == torch.float32


def test_targets_mix_the_majority_label_with_the_votes():
    labels = ["Joyful", "Terrified", "Neutral"]
    split = DialogueExample(["t"], "Joyful", ("Joyful", "Joyful", "Terrified"))
    unanimous = DialogueExample(["t"], "Neutral", ("Neutral", "Neutral", "Neutral"))
    assert target_distributions([split, unanimous], labels, 0.0).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert np.allclose(target_distributions([split], labels, 1.0), [[2 / 3, 1 / 3, 0]])
    assert np.allclose(target_distributions([split], labels, 0.5), [[5 / 6, 1 / 6, 0]])
    assert np.allclose(target_distributions([unanimous], labels, 0.5), [[0, 0, 1]])


def test_an_example_without_a_majority_trains_on_its_votes_and_unknown_votes_are_ignored():
    labels = ["Joyful", "Terrified", "Neutral"]
    no_majority = DialogueExample(["t"], None, ("Joyful", "Terrified", "Forgetful"))
    assert np.allclose(target_distributions([no_majority], labels, 0.3), [[0.5, 0.5, 0]])
    with pytest.raises(ValueError, match="train example 0 has no label and no votes"):
        target_distributions([no_majority], labels, 0.0)
    with pytest.raises(ValueError, match="train example 0 has no label and no votes"):
        target_distributions([DialogueExample(["t"], None, ("Forgetful",))], labels, 1.0)


# --- layer-wise learning-rate decay ---------------------------------------------------------


def _lr_of(groups, parameter):
    return next(group["lr"] for group in groups if any(p is parameter for p in group["params"]))


def test_layer_wise_decay_gives_lower_layers_a_lower_lr():
    clf = build_classifier(TOY_LABELS, tiny_config(lr=1e-3, head_lr=1e-2, layer_lr_decay=0.5))
    encoder = clf.model.encoder  # two layers
    groups = parameter_groups(clf.model, clf.config)
    assert _lr_of(groups, encoder.encoder.layer[1].attention.self.query.weight) == pytest.approx(1e-3)
    assert _lr_of(groups, encoder.encoder.layer[0].output.dense.bias) == pytest.approx(5e-4)
    assert _lr_of(groups, encoder.embeddings.word_embeddings.weight) == pytest.approx(2.5e-4)
    assert _lr_of(groups, clf.model.output.weight) == pytest.approx(1e-2)
    # every parameter in exactly one group
    grouped = [id(p) for group in groups for p in group["params"]]
    assert sorted(grouped) == sorted(id(p) for p in clf.model.parameters())


def test_without_layer_wise_decay_the_whole_encoder_shares_one_lr():
    clf = build_classifier(TOY_LABELS, tiny_config(lr=1e-3))
    groups = parameter_groups(clf.model, clf.config)
    encoder_lrs = {group["lr"] for group in groups if group["name"] != "head"}
    assert encoder_lrs == {1e-3}
    assert _lr_of(groups, clf.model.output.weight) == 1e-3  # head_lr None: the encoder's lr


# --- EMA of the weights ---------------------------------------------------------------------


def test_the_weight_average_is_the_exponential_average_of_the_steps():
    layer = nn.Linear(2, 1)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[0.0, 4.0]]))
    average = WeightAverage(layer, decay=0.5, warmup=False)
    for values in ([2.0, 0.0], [4.0, 8.0]):
        with torch.no_grad():
            layer.weight.copy_(torch.tensor([values]))
        average.update(layer)
    # 0.25 * start + 0.25 * first step + 0.5 * second step
    expected = torch.tensor([[0.25 * 0 + 0.25 * 2 + 0.5 * 4, 0.25 * 4 + 0.25 * 0 + 0.5 * 8]])
    with average.swapped_in(layer):
        assert torch.allclose(layer.weight, expected)
    assert torch.equal(layer.weight, torch.tensor([[4.0, 8.0]]))  # the last weights come back


def test_the_average_warms_up_so_the_first_weights_fade_quickly():
    average = WeightAverage(nn.Linear(1, 1), decay=0.999)
    assert average.current_decay() == pytest.approx(0.1)
    average.updates = 10_000
    assert average.current_decay() == 0.999


def test_with_ema_the_kept_weights_are_the_averaged_ones(toy_examples):
    config = tiny_config(ema_decay=0.9, epochs=3)
    clf = train(toy_examples[::2], toy_examples[1::2], TOY_LABELS, config)
    best = min(clf.history, key=lambda record: record["val_loss"])
    assert clf.best_epoch == best["epoch"]
    assert evaluate(clf, toy_examples[1::2])["loss"] == pytest.approx(best["val_loss"], abs=1e-5)
    # and the averaged weights are not the last ones: the same run without EMA ends elsewhere
    plain = train(toy_examples[::2], toy_examples[1::2], TOY_LABELS, tiny_config(epochs=3))
    if plain.best_epoch == clf.best_epoch:
        assert not torch.allclose(plain.model.output.weight, clf.model.output.weight)
    assert [r["val_loss"] for r in plain.history] != [r["val_loss"] for r in clf.history]


# --- R-Drop ---------------------------------------------------------------------------------


def test_symmetric_kl_is_zero_for_equal_outputs_and_symmetric():
    torch.manual_seed(1)
    first, second = torch.randn(4, 5), torch.randn(4, 5)
    assert symmetric_kl(first, first).item() == pytest.approx(0.0, abs=1e-7)
    assert symmetric_kl(first, second).item() == pytest.approx(symmetric_kl(second, first).item())
    p, q = torch.softmax(first, -1), torch.softmax(second, -1)
    by_hand = ((p * (p / q).log()).sum(-1) + (q * (q / p).log()).sum(-1)).mean() / 2
    assert symmetric_kl(first, second).item() == pytest.approx(by_hand.item(), rel=1e-5)


# --- all together ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def toy_examples():
    return [DialogueExample(list(turns), label, (label, label)) for turns, label in TOY_DIALOGUES]


def test_it_learns_the_toy_task_with_every_option_on(toy_examples):
    unlabeled = [DialogueExample(["Scared!", "Terrified of the cellar."], None, ("Terrified", "Neutral"))]
    config = tiny_config(
        epochs=12, soft_target_weight=1.0, layer_lr_decay=0.8, ema_decay=0.9, rdrop_alpha=1.0, label_smoothing=0.1
    )
    clf = train(toy_examples + unlabeled, [], TOY_LABELS, config)
    assert evaluate(clf, toy_examples)["accuracy"] >= 0.75
    assert TrainConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    "field, value",
    [("soft_target_weight", 1.5), ("layer_lr_decay", 0.0), ("ema_decay", 1.0), ("rdrop_alpha", -1.0)],
)
def test_it_refuses_an_option_out_of_range(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})


def test_the_new_options_are_off_by_default():
    config = TrainConfig()
    assert (config.soft_target_weight, config.layer_lr_decay, config.ema_decay, config.rdrop_alpha) == (
        0.0,
        1.0,
        None,
        0.0,
    )
