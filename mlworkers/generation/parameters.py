"""The `dataset_utility` job's parameters (its schema, read by the Jobs page, the API, the command
and the run) and the command line that runs them again.

Datasets by name:
    raw              every subtitle dialogue (the pre-training corpus)
    gold             dialogues with a crowd label (TurnLabel source crowd)
    gold_silver      dialogues with any label: crowd, SBERT, self or a model prediction
    label:<name>     dialogues with a label of that name (one emotion or intent group)
    pairs:<path>     a SubTle pairs JSONL file on the server (`manage.py extract_pairs --format jsonl`)
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from jobs.registry import JobParameters

DATASET_HELP = "raw, gold, gold_silver, label:<name> or pairs:<path of a SubTle pairs JSONL file>"


class DatasetUtilityParameters(JobParameters):
    pretrain: str = Field("raw", max_length=500, title="Pre-training dataset", description=DATASET_HELP)
    finetune: str = Field(
        "gold",
        min_length=1,
        max_length=2000,
        title="Fine-tuning datasets",
        description="commas between; a row each: " + DATASET_HELP,
    )
    test_sets: str = Field(
        "",
        max_length=2000,
        title="Other test sets",
        description="commas between: zero-shot columns besides the fine-tuning datasets'",
    )
    layers: int = Field(4, ge=1, le=24, title="Layers", description="encoder and decoder each (the paper's 4)")
    heads: int = Field(6, ge=1, le=32, title="Attention heads", description="the paper's 6")
    hidden: int = Field(
        300, ge=8, le=2048, title="Hidden size", description="a multiple of the heads (the paper's 300)"
    )
    ffn: int = Field(1200, ge=8, le=8192, title="Feed-forward size")
    dropout: float = Field(0.1, ge=0.0, le=0.9, title="Dropout")
    vocab_size: int = Field(8000, ge=100, le=100_000, title="Vocabulary", description="WordPiece, trained on the data")
    max_context_tokens: int = Field(128, ge=8, le=1024, title="Context tokens", description="cut from the left")
    max_response_tokens: int = Field(40, ge=4, le=256, title="Response tokens")
    max_epochs: int = Field(
        30, ge=1, le=500, title="Epochs at most", description="per model; early stopping ends sooner"
    )
    patience: int = Field(2, ge=1, le=50, title="Patience", description="epochs without a better validation loss")
    lr: float = Field(5e-4, gt=0, le=0.1, title="Learning rate")
    batch_size: int = Field(64, ge=1, le=4096, title="Batch size")
    beam_size: int = Field(32, ge=1, le=128, title="Beam size", description="the paper's 32")
    block_ngram: int = Field(4, ge=0, le=10, title="Block repeated n-grams", description="0: off; the paper's 4")
    generate_limit: int | None = Field(
        500, ge=1, le=1_000_000, title="Generated responses per test set", description="for D1, D2, SES; empty: all"
    )
    max_pairs: int | None = Field(None, ge=1, title="Pairs per split at most", description="empty: all")
    encoder: str | None = Field(None, max_length=300, title="SES encoder", description="empty: ENCODER_MODEL (MiniLM)")
    seed: int = Field(13, ge=0, le=2**31 - 1, title="Seed")
    name: str = Field("", max_length=200, title="Name")

    @model_validator(mode="after")
    def _heads_divide_hidden(self):
        if not names(self.finetune):
            raise ValueError("name at least one fine-tuning dataset")
        if self.hidden % self.heads:
            raise ValueError(f"the hidden size ({self.hidden}) must be a multiple of the heads ({self.heads})")
        return self


def names(text: str) -> list[str]:
    """The dataset names of a comma-separated parameter, in order, each once."""
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


def reproduce_command(parameters: dict[str, Any]) -> str:
    """The `manage.py dataset_utility` line that runs these parameters again."""
    parts = ["python manage.py dataset_utility"]
    for key in DatasetUtilityParameters.model_fields:  # the schema's order (a JSON column keeps none)
        value = parameters.get(key)
        if value is not None and value != "":
            parts.append(f"--{key.replace('_', '-')} {_quoted(value)}")
    return " ".join(parts)


def _quoted(value: Any) -> str:
    import shlex

    return shlex.quote(str(value))
