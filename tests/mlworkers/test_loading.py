"""Model loading: offline by default, "minilm" is the packaged model, devices chosen with care."""

from pathlib import Path

import pytest
import torch

from mlworkers.ml import loading


def test_minilm_is_the_packaged_folder():
    path = Path(loading.resolve_model_path("minilm"))
    assert (path / "config.json").exists() and (path / "tokenizer.json").exists()


def test_a_local_folder_is_passed_through(tmp_path):
    assert loading.resolve_model_path(str(tmp_path)) == str(tmp_path)


def test_an_uncached_hub_name_is_refused_offline_with_a_clear_error():
    with pytest.raises(FileNotFoundError, match="no-such-org/no-such-model.*HF_OFFLINE"):
        loading.resolve_model_path("no-such-org/no-such-model", offline=True)


def test_a_hub_name_is_passed_through_when_online():
    assert loading.resolve_model_path("roberta-base", offline=False) == "roberta-base"


def test_offline_follows_the_environment(monkeypatch):
    monkeypatch.setenv("HF_OFFLINE", "0")
    assert loading.offline_by_default() is False
    monkeypatch.setenv("HF_OFFLINE", "1")
    assert loading.offline_by_default() is True


def test_it_refuses_an_empty_name():
    with pytest.raises(ValueError, match="empty"):
        loading.resolve_model_path("  ")


def test_the_packaged_tokenizer_and_encoder_load():
    tokenizer = loading.load_tokenizer("minilm")
    encoder = loading.load_encoder("minilm")
    assert tokenizer.sep_token == "[SEP]"
    assert encoder.config.hidden_size == 384


def test_pick_device():
    assert loading.pick_device("cpu") == torch.device("cpu")
    assert loading.pick_device("auto").type in {"cpu", "cuda", "mps"}
    with pytest.raises(ValueError, match="unknown device"):
        loading.pick_device("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_asking_for_a_missing_cuda_device_is_an_error():
    with pytest.raises(RuntimeError, match="no CUDA"):
        loading.pick_device("cuda")
