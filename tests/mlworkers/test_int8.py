"""int8 CPU inference: ML_PRECISION=int8 (and "auto" on a CPU where int8 measures faster than fp32)
loads the classifier in fp32 and quantizes its encoder's linear layers; predictions stay close to fp32; a
GPU falls back to its own precision with a logged reason; training and bad values are refused."""

import logging
import time
import types

import numpy as np
import pytest
import torch
from torch import nn

from mlworkers.ml.classifier import cpu_precision, precision, quantize
from mlworkers.ml.classifier.dialogue_classifier import load_classifier, load_for_inference, predict_proba, train
from mlworkers.ml.classifier.inference import encode_examples, predict_top_k_encoded
from tests.mlworkers import tiny_models
from tests.mlworkers.tiny_models import TOY_LABELS, one_torch_thread

single_thread = pytest.fixture(autouse=True)(one_torch_thread)


@pytest.fixture(scope="module")
def toy_examples():
    return tiny_models.toy_examples()


config = tiny_models.toy_config


@pytest.fixture(scope="module")
def saved(toy_examples, tmp_path_factory):
    """A tiny classifier trained on the toy task (so its logits are far from uniform), saved."""
    clf = train(toy_examples, toy_examples, TOY_LABELS, config())
    return clf.save(tmp_path_factory.mktemp("int8") / "saved")


def linear_types(module: nn.Module) -> set[str]:
    """ "int8" for an int8 linear layer, the dtype's name for a float one."""
    kinds = set()
    for child in module.modules():
        if isinstance(child, quantize.Int8Linear):
            kinds.add("int8")
        elif isinstance(child, nn.Linear):
            kinds.add(str(child.weight.dtype).removeprefix("torch."))
    return kinds


def test_int8_loads_quantized_and_predicts_like_fp32(saved, toy_examples):
    full = load_classifier(saved, device="cpu", precision_name="fp32")
    small = load_for_inference(saved, device="cpu", precision_name="int8")
    assert small.precision == "int8" and small.device.type == "cpu"
    # every linear layer of the encoder is int8; the head (pooling, tanh layer, output) stays fp32
    assert linear_types(small.model.encoder) == {"int8"}
    assert linear_types(full.model.encoder) == {"float32"}
    assert all(type(small.model.get_submodule(name)) is nn.Linear for name in ("attention", "hidden", "output"))
    expected, got = predict_proba(full, toy_examples), predict_proba(small, toy_examples)
    assert np.isfinite(got).all() and np.allclose(got.sum(axis=1), 1, atol=1e-5)
    assert (got.argmax(axis=1) == expected.argmax(axis=1)).all()
    assert np.abs(got - expected).max() < 0.05
    assert not np.array_equal(got, expected)  # really a different (quantized) computation


def test_int8_linear_scales_each_token_on_its_own():
    torch.manual_seed(0)
    linear = nn.Linear(48, 24)
    layer = quantize.Int8Linear(linear)
    assert layer.weight_int8.dtype == torch.int8 and layer.weight_int8.shape == (48, 24)
    # per output channel: each channel's largest weight maps to +-127 exactly
    assert (layer.weight_int8.abs().amax(dim=0) == 127).all()
    tokens = torch.randn(5, 7, 48)
    exact, got = linear(tokens), layer(tokens)
    assert got.shape == exact.shape and got.dtype == torch.float32
    assert (got - exact).abs().mean() / exact.abs().mean() < 0.02
    # a token's output is the same alone or beside others, even beside a huge outlier token
    # (a per-batch scale would have flattened the small tokens to a few levels)
    crowd = tokens.clone()
    crowd[1:, 0] *= 1000
    assert torch.equal(layer(crowd)[0], layer(tokens[:1])[0])
    assert torch.equal(layer(tokens[2:3, 4:5]), layer(tokens)[2:3, 4:5])
    # an all-zero token gives the bias; no rows give no rows
    assert torch.allclose(layer(torch.zeros(1, 48)), linear.bias.detach().unsqueeze(0))
    assert layer(torch.zeros(0, 48)).shape == (0, 24)
    # a layer without a bias
    bare = nn.Linear(48, 8, bias=False)
    assert torch.allclose(quantize.Int8Linear(bare)(tokens), bare(tokens), atol=0.1)


def test_an_int8_turn_does_not_depend_on_the_turns_batched_with_it(saved, toy_examples):
    small = load_for_inference(saved, device="cpu", precision_name="int8")
    batched = predict_proba(small, toy_examples, batch_size=len(toy_examples))
    alone = np.concatenate([predict_proba(small, [example], batch_size=1) for example in toy_examples])
    assert (alone.argmax(axis=1) == batched.argmax(axis=1)).all()
    # only fp32 rounding of the unquantized parts (padding to another length) differs
    assert np.abs(alone - batched).max() < 1e-4


def test_int8_top_k_runs_through_the_bulk_path(saved, toy_examples):
    small = load_for_inference(saved, device="cpu", precision_name="int8")
    encoded = encode_examples(toy_examples, small.tokenizer, 100)
    indices, values = predict_top_k_encoded(
        small.model, encoded, k=2, pad_id=small.tokenizer.pad_token_id, decay=0.5, batch_size=5
    )
    assert indices.shape == (len(toy_examples), 2) and (values[:, 0] >= values[:, 1]).all()
    targets = [TOY_LABELS.index(example.label) for example in toy_examples]
    assert (indices[:, 0] == np.array(targets)).mean() >= 0.75


def test_auto_on_a_cpu_times_fp32_and_int8_and_keeps_the_faster(saved, monkeypatch):
    monkeypatch.delenv("ML_PRECISION", raising=False)
    cpu_precision.forget()
    assert precision.inference_precision("auto", "cpu") == precision.CPU_AUTO
    assert precision.inference_precision(None, "cpu") == precision.CPU_AUTO
    clf = load_for_inference(saved, device="cpu")
    choice = clf.precision_choice
    assert choice.fp32_ms > 0 and choice.int8_ms > 0 and choice.cpu and choice.threads == torch.get_num_threads()
    # the rule, whichever way this machine's timings fall
    assert choice.precision == ("int8" if choice.int8_ms <= cpu_precision.INT8_SHARE * choice.fp32_ms else "fp32")
    assert clf.precision == choice.precision
    assert linear_types(clf.model.encoder) == {"int8" if choice.precision == "int8" else "float32"}
    assert choice.precision in choice.summary() and "fp32" in choice.summary()
    # training's "auto" on a CPU is still fp32, whatever inference does
    assert precision.resolve("auto", "cpu") == "fp32"


def test_a_cpu_whose_int8_product_is_slow_runs_fp32_and_stops_timing_it_early(saved, monkeypatch):
    """What a CPU without VNNI or AMX looks like to the loader: every int8 product many times slower
    than fp32's (on a 2-core AVX2 EPYC: 22-36x), so "auto" must come up fp32, and the trial stops at
    its one-layer probe: no whole batch runs in int8 (one took 48-202 s on that EPYC)."""
    real_int_mm, calls = torch._int_mm, []

    def slow_int_mm(a, b):
        calls.append(a.shape[0])
        started = time.perf_counter()
        a.float() @ b.float()  # what the product costs in floats here, then 20 times that as a wait
        time.sleep(0.005 + 20 * (time.perf_counter() - started))
        return real_int_mm(a, b)

    monkeypatch.setattr(torch, "_int_mm", slow_int_mm)
    monkeypatch.delenv("ML_PRECISION", raising=False)
    cpu_precision.forget()
    clf = load_for_inference(saved, device="cpu", precision_name="auto")
    assert clf.precision == "fp32" and linear_types(clf.model.encoder) == {"float32"}
    choice = clf.precision_choice
    assert choice.precision == "fp32" and choice.int8_ms > cpu_precision.STOP_AFTER * choice.fp32_ms
    assert "one layer" in choice.reason
    # the probe layer's warm-up and one counted run, on a bulk batch's rows; then the trial stopped
    assert calls == [cpu_precision.TRIAL_ROWS * cpu_precision.TRIAL_TOKENS] * 2


def test_a_cpu_whose_fp32_product_is_slow_runs_int8(saved, monkeypatch):
    """fp32 products made slow, and int8 ones as fast as a float product, whatever this machine's
    int8 kernels are (on an AVX2-only CPU they are 20-50x slower than fp32's: the test must not
    depend on the machine it runs on)."""
    real_linear = torch.nn.functional.linear

    def slow_linear(*args, **kwargs):
        time.sleep(0.005)
        return real_linear(*args, **kwargs)

    def float_int_mm(a, b):
        return (a.float() @ b.float()).round().to(torch.int32)

    monkeypatch.setattr(torch.nn.functional, "linear", slow_linear)
    monkeypatch.setattr(torch, "_int_mm", float_int_mm)
    cpu_precision.forget()
    clf = load_for_inference(saved, device="cpu", precision_name="auto")
    assert clf.precision == "int8" and linear_types(clf.model.encoder) == {"int8"}
    assert clf.precision_choice.int8_ms <= cpu_precision.INT8_SHARE * clf.precision_choice.fp32_ms


def test_the_choice_is_measured_once_per_process_and_a_forced_precision_is_not_measured(saved, monkeypatch):
    cpu_precision.forget()
    measured = []
    real_measure = cpu_precision.measure
    monkeypatch.setattr(cpu_precision, "measure", lambda clf: measured.append(1) or real_measure(clf))
    first = load_for_inference(saved, device="cpu", precision_name="auto")
    second = load_for_inference(saved, device="cpu", precision_name="auto")
    assert len(measured) == 1 and second.precision_choice == first.precision_choice
    for forced in ("fp32", "int8"):
        monkeypatch.setenv("ML_PRECISION", forced)
        clf = load_for_inference(saved, device="cpu")
        assert clf.precision == forced and clf.precision_choice is None
    assert len(measured) == 1


def test_the_cpu_is_described_by_its_model_and_int8_flags(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC 7B12\nflags\t\t: fpu sse avx avx2 fma\n\n")
    assert cpu_precision.cpu_description(info) == ("AMD EPYC 7B12", ())
    info.write_text("model name\t: Intel(R) Xeon(R)\nflags\t\t: avx2 avx512f avx512_vnni amx_int8 amx_tile\n")
    assert cpu_precision.cpu_description(info) == ("Intel(R) Xeon(R)", ("avx512_vnni", "amx_int8"))
    assert cpu_precision.cpu_description(tmp_path / "missing")[1] == ("unknown",)


def test_explicit_float_precisions_are_not_quantized(saved):
    for name in ("fp32", "bf16"):
        clf = load_for_inference(saved, device="cpu", precision_name=name)
        assert clf.precision == name and linear_types(clf.model.encoder) == {
            str(precision.dtype_of(name)).removeprefix("torch.")
        }


def test_int8_on_a_gpu_falls_back_to_the_gpus_precision_with_a_logged_reason(saved, monkeypatch, caplog):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    with caplog.at_level(logging.WARNING, logger="mlworkers.ml.classifier.precision"):
        assert precision.inference_precision("int8", "cuda") == "bf16"
    assert "int8 runs on the CPU only" in caplog.text and "bf16" in caplog.text
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: False)
    assert precision.inference_precision("int8", "cuda:0") == "fp16"
    assert precision.inference_precision("auto", "cuda") == "fp16"  # auto on a GPU never means int8

    # the loader: a model that came up on a GPU is returned as loaded (its "auto" dtype), not quantized
    on_gpu = types.SimpleNamespace(device=torch.device("cuda"), precision="fp16", model=None)
    asked = []

    def fake_load(directory, device=None, precision_name=None):
        asked.append(precision_name)
        return on_gpu

    monkeypatch.setattr("mlworkers.ml.classifier.dialogue_classifier.load_classifier", fake_load)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mlworkers.ml.classifier.precision"):
        assert load_for_inference(saved, device="cuda", precision_name="int8") is on_gpu
    assert asked == ["auto"] and on_gpu.precision == "fp16" and "CPU only" in caplog.text


def test_quantizing_refuses_a_model_off_the_cpu_or_not_in_fp32(saved):
    clf = load_classifier(saved, device="cpu", precision_name="fp32")
    with pytest.raises(ValueError, match="CPU only; the model is on meta"):
        quantize.quantize_encoder(clf.model.to("meta"))
    half = load_classifier(saved, device="cpu", precision_name="bf16")
    with pytest.raises(ValueError, match="starts from fp32 weights"):
        quantize.quantize_encoder(half.model)


def test_quantize_encoder_leaves_the_original_model_alone_unless_in_place(saved):
    clf = load_classifier(saved, device="cpu", precision_name="fp32")
    copy = quantize.quantize_encoder(clf.model)
    assert copy is not clf.model and linear_types(clf.model.encoder) == {"float32"}
    assert linear_types(copy.encoder) == {"int8"}
    assert quantize.quantize_encoder(clf.model, inplace=True) is clf.model
    assert linear_types(clf.model.encoder) == {"int8"}


def test_int8_is_for_inference_only(toy_examples, saved, monkeypatch):
    with pytest.raises(ValueError, match="'int8' is for CPU inference only"):
        precision.resolve("int8", "cpu")
    with pytest.raises(ValueError, match="'int8' is for CPU inference only"):
        train(toy_examples[:4], [], TOY_LABELS, config(precision="int8", epochs=1))
    # load_classifier casts to a dtype: asked for int8 it refuses rather than return an fp32 model
    with pytest.raises(ValueError, match="load_for_inference"):
        load_classifier(saved, device="cpu", precision_name="int8")
    monkeypatch.setenv("ML_PRECISION", "int8")
    with pytest.raises(ValueError, match="'int8' is for CPU inference only"):
        load_classifier(saved, device="cpu")
    # nor is an int8 classifier saved: its folder would hold int8 buffers no loader reads
    small = load_for_inference(saved, device="cpu", precision_name="int8")
    with pytest.raises(ValueError, match="an int8 classifier is for inference only"):
        small.save(saved.parent / "int8-copy")
    assert not (saved.parent / "int8-copy").exists()


def test_a_bad_ml_precision_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("ML_PRECISION", "int4")
    with pytest.raises(ValueError, match="precision 'int4' must be one of auto, fp32, bf16, fp16, int8"):
        precision.inference_precision(None, "cpu")
    with pytest.raises(ValueError, match="'int4'"):
        load_for_inference("/nowhere", device="cpu")
    monkeypatch.setenv("ML_PRECISION", " INT8 ")
    assert precision.inference_precision(None, "cpu") == "int8"
