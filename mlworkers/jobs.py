"""The ML app's jobs and their typed parameters (found by jobs' autodiscovery at start-up).

The functions live in `pipeline.py` and `bulk.py`; this module declares them to the registry with
the bounds the Jobs page, the API and the OpenAPI schema all use.
"""

from typing import Literal

from pydantic import Field

from jobs.registry import JobParameters, register
from mlworkers import bulk, demo, pipeline  # noqa: F401  (demo declares demo_build)

SearchMethod = Literal["faiss", "chunked", "brute"]
ModelVersionId = Field(None, ge=1, title="Model version id", description="empty: the newest one of the right kind")
Threshold = Field(0.92, ge=0.0, le=1.0, title="Similarity threshold", description="cosine similarity, 0 to 1")


class WeakTrainParameters(JobParameters):
    data_path: str | None = Field(
        None,
        max_length=500,
        title="Training data",
        description="a CSV or JSONL file of text,label on the server; empty: the seed set",
    )
    model_name: str | None = Field(None, max_length=200, title="Encoder", description="empty: WEAK_LABELER_MODEL")
    fine_tune: bool = Field(False, title="Fine-tune the encoder", description="slower; off trains only the head")
    epochs: int | None = Field(None, ge=1, le=50, title="Epochs", description="empty: the labeler's default")
    name: str | None = Field(None, max_length=200, title="Model name")


class WeakApplyParameters(JobParameters):
    model_version_id: int | None = ModelVersionId
    chunk_size: int = Field(2000, ge=1, le=50_000, title="Turns per chunk", description="committed together")
    batch_size: int = Field(128, ge=1, le=2048, title="Batch size")


class RankCandidatesParameters(JobParameters):
    model_version_id: int | None = ModelVersionId
    min_confidence: float = Field(0.9, ge=0.0, le=1.0, title="Prefilter", description="weak confidence at least")
    per_label: int = Field(250, ge=1, le=100_000, title="Candidates per label")
    campaign_id: int | None = Field(None, ge=1, title="Campaign id", description="build the HITs into this campaign")
    campaign_name: str | None = Field(None, max_length=200, title="New campaign", description="or create this one")
    seed: int = Field(13, ge=0, le=2**31 - 1, title="Shuffle seed")


class GoldSplitParameters(JobParameters):
    """No parameters: the split of a dialogue is a function of its content (annotation.splits)."""


class SbertExpandParameters(JobParameters):
    threshold: float = Threshold
    round_number: int = Field(1, ge=1, le=100, title="Round number")
    method: SearchMethod = Field("faiss", title="Search method")


class SelfLabelRoundsParameters(JobParameters):
    epochs: int = Field(2, ge=1, le=50, title="Epochs", description="of the dialogue classifier per round")
    lr: float | None = Field(None, gt=0, le=0.01, title="Learning rate", description="empty: 2e-5 (the paper's)")
    head_lr: float | None = Field(
        None, gt=0, le=0.1, title="Head learning rate", description="for the new layers; empty: the learning rate"
    )
    first_threshold: float = Field(0.92, ge=0.0, le=1.0, title="First SBERT threshold")
    second_threshold: float = Field(0.9, ge=0.0, le=1.0, title="Second SBERT threshold")
    self_per_label: int = Field(100, ge=1, le=100_000, title="Self labels per label")
    self_min_confidence: float = Field(0.9, ge=0.0, le=1.0, title="Self-label confidence at least")
    method: SearchMethod = Field("faiss", title="Search method")


class BulkAnnotateParameters(JobParameters):
    model_version_id: int | None = Field(
        None, ge=1, title="Dialogue classifier id", description="empty: the newest dialogue classifier"
    )
    dialogue_ids: list[int] | None = Field(None, max_length=100_000, title="Only these dialogues")
    chunk_size: int = Field(bulk.DEFAULT_CHUNK_SIZE, ge=1, le=100_000, title="Turns per chunk")
    batch_size: int = Field(64, ge=1, le=2048, title="Batch size")


class RunPipelineParameters(JobParameters):
    steps: list[Literal[pipeline.STEPS]] = Field(  # type: ignore[valid-type]
        ["weak_train", "weak_apply", "rank_candidates"], min_length=1, title="Steps", description="run in this order"
    )
    data_path: str | None = WeakTrainParameters.model_fields["data_path"]
    model_name: str | None = WeakTrainParameters.model_fields["model_name"]
    fine_tune: bool = Field(False, title="Fine-tune the weak labeler's encoder")
    weak_epochs: int | None = Field(None, ge=1, le=50, title="Weak labeler epochs")
    min_confidence: float | None = Field(None, ge=0.0, le=1.0, title="Prefilter", description="empty: 0.9")
    per_label: int | None = Field(None, ge=1, le=100_000, title="Candidates per label", description="empty: 250")
    campaign_id: int | None = Field(None, ge=1, title="Campaign id")
    campaign_name: str | None = Field("Weak-labeled candidates", max_length=200, title="New campaign")
    epochs: int | None = Field(None, ge=1, le=50, title="Dialogue classifier epochs")


register("weak_train", queue="ml", parameters=WeakTrainParameters, startable=True)(pipeline.weak_train)
register("weak_apply", queue="ml", parameters=WeakApplyParameters, startable=True)(pipeline.weak_apply)
register("rank_candidates", parameters=RankCandidatesParameters, startable=True)(pipeline.rank_candidates)
register("gold_split", parameters=GoldSplitParameters, startable=True)(pipeline.gold_split)
register("sbert_expand", queue="ml", parameters=SbertExpandParameters, startable=True)(pipeline.sbert_expand)
register("self_label_rounds", queue="ml", parameters=SelfLabelRoundsParameters, startable=True)(
    pipeline.self_label_rounds
)
register("bulk_annotate", queue="ml", parameters=BulkAnnotateParameters, startable=True)(bulk.annotate_corpus)
register("run_pipeline", queue="ml", parameters=RunPipelineParameters, startable=True)(pipeline.run_pipeline)
