"""The `dataset_utility` job: what a curated dataset is worth for training a dialogue model (the
EDOS paper's Table 7). The model and metrics live in `mlworkers.ml.generation.response_model`; this module
reads the datasets, runs the stages resumably and stores the table with a ModelVersion. Its
parameters and the datasets' names are in `parameters`; the run itself is `utility_run`, which
loads torch, so only a worker imports it.

A dialogue's split is the one stored in `Dialogue.split` (80/10/10, annotation.splits); a pairs
file is split by film (the hash of its `file`), so a film never sits on two sides. The result
stores each split's size and a digest of its test pairs, so a rerun shows it compared like with like.

Stages: a pre-trained model (from scratch on `pretrain`), then one fine-tuned model per
`finetune` dataset (from the pre-trained weights), each until the validation loss stops
improving; every model is scored on every dataset's test split. Each epoch leaves a checkpoint in
MEDIA_ROOT/dataset_utility/job-<id>/, so a requeued or retried job goes on at the last epoch boundary.
"""

from __future__ import annotations

from typing import Any

from jobs.models import JobRun


def dataset_utility(job: JobRun, **parameters: Any) -> dict[str, Any]:
    """Train a dialogue Transformer on the raw dialogues, fine-tune it on curated datasets and score
    every model on every test split (perplexity, Distinct-1/2, SES): the EDOS paper's Table 7.

    Resumable at epoch boundaries; the table is stored with a new `response` model version."""
    from mlworkers.generation.utility_run import run  # torch: only in the worker

    return run(job, parameters)
