"""The ML app's jobs and their typed parameters (found by jobs' autodiscovery at start-up).

The functions live in the step modules, grouped by the capability they run (`classifier/`,
`expansion/`, `generation/`, `botstalk/`, `rounds/`, `chain/`; `gold.py`); this module declares
them to the registry with the bounds the Jobs page, the API and the OpenAPI schema all use.
"""

from typing import Literal

from pydantic import Field

from annotation.papers import (
    CANDIDATES_PER_LABEL,
    CLASSIFIER_LEARNING_RATE,
    PREFILTER_CONFIDENCE,
    SELF_LABEL_MIN_CONFIDENCE,
    SELF_LABELS_PER_LABEL,
)
from jobs.registry import JobParameters, register
from mlworkers import gold
from mlworkers.botstalk import runs as botstalk
from mlworkers.chain import (
    candidates,
    demo,  # noqa: F401  (demo declares demo_build)
    pipeline,
)
from mlworkers.classifier import bulk, suggestions, weak_labeler
from mlworkers.expansion import calibration as expansion_calibration
from mlworkers.expansion import sbert as expansion
from mlworkers.generation import dataset_utility
from mlworkers.generation.parameters import DatasetUtilityParameters
from mlworkers.ml.expansion.calibration import DEFAULT_PRECISION_MARGIN, MIN_MATCHES
from mlworkers.ml.expansion.similarity import PAPER_SBERT_THRESHOLD, PAPER_SECOND_SBERT_THRESHOLD
from mlworkers.rounds import self_labeling as rounds

SearchMethod = Literal["faiss", "chunked", "brute"]
ModelVersionId = Field(None, ge=1, title="Model version id", description="empty: the newest one of the right kind")
Threshold = Field(
    None,
    ge=0.0,
    le=1.0,
    title="Similarity threshold",
    description=f"cosine similarity, 0 to 1; empty: the encoder's calibrated threshold, else the paper's {PAPER_SBERT_THRESHOLD}",
)


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
    min_confidence: float = Field(
        PREFILTER_CONFIDENCE, ge=0.0, le=1.0, title="Prefilter", description="weak confidence at least"
    )
    per_label: int = Field(CANDIDATES_PER_LABEL, ge=1, le=100_000, title="Candidates per label")
    campaign_id: int | None = Field(None, ge=1, title="Campaign id", description="build the HITs into this campaign")
    campaign_name: str | None = Field(None, max_length=200, title="New campaign", description="or create this one")
    seed: int = Field(13, ge=0, le=2**31 - 1, title="Shuffle seed")


class SuggestTrainParameters(JobParameters):
    name: str | None = Field(None, max_length=200, title="Model name")


class GoldSplitParameters(JobParameters):
    """No parameters: the split of a dialogue is a function of its content (annotation.splits)."""


class SbertExpandParameters(JobParameters):
    threshold: float | None = Threshold
    round_number: int = Field(1, ge=1, le=100, title="Round number")
    method: SearchMethod = Field("faiss", title="Search method")


class SelfLabelRoundsParameters(JobParameters):
    epochs: int = Field(2, ge=1, le=50, title="Epochs", description="of the dialogue classifier per round")
    lr: float | None = Field(
        None, gt=0, le=0.01, title="Learning rate", description=f"empty: {CLASSIFIER_LEARNING_RATE:g} (the paper's)"
    )
    head_lr: float | None = Field(
        None, gt=0, le=0.1, title="Head learning rate", description="for the new layers; empty: the learning rate"
    )
    first_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        title="First SBERT threshold",
        description=f"empty: the encoder's calibrated threshold, else (and with the paper recipe) {PAPER_SBERT_THRESHOLD}",
    )
    second_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        title="Second SBERT threshold",
        description=f"empty: the encoder's calibrated threshold, else (and with the paper recipe) "
        f"{PAPER_SECOND_SBERT_THRESHOLD}",
    )
    self_per_label: int = Field(SELF_LABELS_PER_LABEL, ge=1, le=100_000, title="Self labels per label")
    self_min_confidence: float = Field(
        SELF_LABEL_MIN_CONFIDENCE, ge=0.0, le=1.0, title="Self-label confidence at least"
    )
    method: SearchMethod = Field("faiss", title="Search method")
    chunk_size: int = Field(
        2000, ge=1, le=100_000, title="Unlabeled dialogues per chunk", description="read and scored at a time"
    )
    recipe: Literal["measured", "paper"] = Field(
        "measured",
        title="Classifier recipe",
        description="measured: every worker's answer as a soft target, no-majority dialogues included, "
        "EMA (bench/classifier_edos.py); paper: the majority label alone",
    )


class CalibrateExpansionParameters(JobParameters):
    precision_margin: float = Field(
        DEFAULT_PRECISION_MARGIN,
        ge=0.0,
        le=1.0,
        title="Precision margin",
        description=f"propose the lowest threshold whose precision is within this of the precision at the paper's "
        f"{PAPER_SBERT_THRESHOLD}",
    )
    target_precision: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        title="Target precision",
        description="instead: the lowest threshold at least this precise",
    )
    min_matches: int = Field(
        MIN_MATCHES,
        ge=1,
        le=1_000_000,
        title="Matches at least",
        description="a threshold fewer held-out dialogues match decides nothing",
    )
    split_seed: int = Field(13, ge=0, le=2**31 - 1, title="Split seed", description="which half of the gold are seeds")


class BulkAnnotateParameters(JobParameters):
    model_version_id: int | None = Field(
        None, ge=1, title="Dialogue classifier id", description="empty: the newest dialogue classifier"
    )
    dialogue_ids: list[int] | None = Field(None, max_length=100_000, title="Only these dialogues")
    chunk_size: int = Field(bulk.DEFAULT_CHUNK_SIZE, ge=1, le=100_000, title="Turns per chunk")
    batch_size: int = Field(64, ge=1, le=2048, title="Batch size")
    precision: Literal["auto", "fp32", "bf16", "fp16", "int8"] | None = Field(
        None,
        title="Precision",
        description="empty: ML_PRECISION (auto = bf16 on a GPU, the CPU default on a CPU; int8 is CPU only)",
    )
    shards: int = Field(
        1,
        ge=1,
        le=256,
        title="Shards",
        description="split into this many jobs, one per free ml worker (e.g. 2x workers)",
    )
    dialogue_id_range: list[int] | None = Field(
        None, min_length=2, max_length=2, title="Dialogue id range", description="set on shards: [first, last]"
    )


class RunPipelineParameters(JobParameters):
    steps: list[Literal[pipeline.STEPS]] = Field(  # type: ignore[valid-type]
        ["weak_train", "weak_apply", "suggest_train", "rank_candidates"],
        min_length=1,
        title="Steps",
        description="run in this order",
    )
    data_path: str | None = WeakTrainParameters.model_fields["data_path"]
    model_name: str | None = WeakTrainParameters.model_fields["model_name"]
    fine_tune: bool = Field(False, title="Fine-tune the weak labeler's encoder")
    weak_epochs: int | None = Field(None, ge=1, le=50, title="Weak labeler epochs")
    min_confidence: float | None = Field(
        None, ge=0.0, le=1.0, title="Prefilter", description=f"empty: {PREFILTER_CONFIDENCE:g}"
    )
    per_label: int | None = Field(
        None, ge=1, le=100_000, title="Candidates per label", description=f"empty: {CANDIDATES_PER_LABEL}"
    )
    campaign_id: int | None = Field(None, ge=1, title="Campaign id")
    campaign_name: str | None = Field(
        candidates.DEFAULT_CAMPAIGN_NAME,
        max_length=200,
        title="New campaign",
        description="the default gets the time it was made; a name already taken gets it too",
    )
    epochs: int | None = Field(None, ge=1, le=50, title="Dialogue classifier epochs")
    recipe: Literal["measured", "paper"] | None = Field(
        None, title="Classifier recipe", description="empty: the rounds' default (measured)"
    )


class SkillTrainParameters(JobParameters):
    data_path: str | None = Field(
        None,
        max_length=2000,
        title="Labeled utterances",
        description="JSONL files of {text, skill} on the server (a pool file is one), commas between; "
        "empty: the example pool",
    )
    model_name: str | None = Field(None, max_length=200, title="Encoder", description="empty: ENCODER_MODEL")
    epochs: int | None = Field(None, ge=1, le=5000, title="Epochs", description="empty: 200 (head only)")
    name: str = Field("", max_length=200, title="Model name")


class NliTrainParameters(JobParameters):
    data_path: str | None = Field(
        None,
        max_length=500,
        title="NLI pairs",
        description="a JSONL file of {premise, hypothesis, label} on the server; empty: the example pairs",
    )
    model_name: str | None = Field(None, max_length=200, title="Encoder", description="empty: ENCODER_MODEL")
    epochs: int | None = Field(None, ge=1, le=5000, title="Epochs", description="empty: 300 (head only)")
    name: str = Field("", max_length=200, title="Model name")


class BotsTalkParameters(JobParameters):
    pools: str | None = Field(
        None,
        max_length=2000,
        title="Skill pools",
        description="JSONL files or folders of {text, skill} on the server, commas between; empty: the example pool",
    )
    contexts: str | None = Field(
        None,
        max_length=500,
        title="Skill contexts",
        description="a JSONL file, one dialogue a line: {id, contexts, start_skill}; empty: the example contexts",
    )
    skill_model_version_id: int | None = Field(
        None, ge=1, title="Skill classifier id", description="empty: the newest skill classifier"
    )
    nli_model: str | None = Field(
        None,
        max_length=300,
        title="NLI model",
        description="a hub name (e.g. roberta-large-mnli) or local path; empty: BOTSTALK_NLI_MODEL, else an NLI model version",
    )
    nli_model_version_id: int | None = Field(None, ge=1, title="NLI model version id", description="empty: the newest")
    encoder: str | None = Field(None, max_length=200, title="Bi-encoder", description="empty: ENCODER_MODEL")
    alpha: float = Field(
        6.0,
        ge=0.0,
        le=1000.0,
        title="Alpha",
        description="pass the mic when KL(previous || candidate) < alpha, in nats; see the result's kl_offered",
    )
    turns: int = Field(6, ge=2, le=50, title="Turns per dialogue")
    top_k: int = Field(5, ge=1, le=100, title="Candidates per agent", description="the moderator judges these")
    nli_threshold: float = Field(0.5, ge=0.0, le=1.0, title="Contradiction at", description="P(contradiction) at least")
    seed: int = Field(13, ge=0, le=2**31 - 1, title="Seed")
    candidates: Literal["corpus", "pool"] = Field(
        "corpus",
        title="Agents speak from",
        description="corpus: the responses of its interaction-response pairs (the pool when it has none); pool: the pool",
    )
    pairs_file: str | None = Field(
        None,
        max_length=500,
        title="Pairs file",
        description="an extract_pairs JSONL file on the server; empty: the pairs of the ingested subtitles",
    )
    max_pairs: int = Field(50_000, ge=1, le=5_000_000, title="Pairs at most")
    dialogue_model_version_id: int | None = Field(
        None, ge=1, title="Dialogue classifier id", description="the emotion agent's labels; empty: the newest, if any"
    )


class SkillLabelParameters(JobParameters):
    skill_model_version_id: int | None = Field(
        None, ge=1, title="Skill classifier id", description="empty: the newest skill classifier"
    )
    source: Literal["all", "subtitles", "botstalk"] = Field("all", title="Dialogues", description="which corpus")
    dialogue_ids: list[int] | None = Field(None, max_length=100_000, title="Only these dialogues")
    chunk_size: int = Field(2000, ge=1, le=100_000, title="Turns per chunk")
    batch_size: int = Field(128, ge=1, le=2048, title="Batch size")


register("weak_train", queue="ml", parameters=WeakTrainParameters, startable=True)(weak_labeler.weak_train)
register("weak_apply", queue="ml", parameters=WeakApplyParameters, startable=True)(weak_labeler.weak_apply)
register("suggest_train", queue="ml", parameters=SuggestTrainParameters, startable=True)(suggestions.suggest_train)
register("rank_candidates", parameters=RankCandidatesParameters, startable=True)(candidates.rank_candidates)
register("gold_split", parameters=GoldSplitParameters, startable=True)(gold.gold_split)
register("calibrate_expansion", queue="ml", parameters=CalibrateExpansionParameters, startable=True)(
    expansion_calibration.calibrate_expansion
)
register(
    "sbert_expand",
    queue="ml",
    parameters=SbertExpandParameters,
    startable=True,
    field_notes=lambda: expansion_calibration.threshold_notes({"threshold": PAPER_SBERT_THRESHOLD}),
)(expansion.sbert_expand)
register(
    "self_label_rounds",
    queue="ml",
    parameters=SelfLabelRoundsParameters,
    startable=True,
    field_notes=lambda: expansion_calibration.threshold_notes(
        {"first_threshold": PAPER_SBERT_THRESHOLD, "second_threshold": PAPER_SECOND_SBERT_THRESHOLD}
    ),
)(rounds.self_label_rounds)
register("bulk_annotate", queue="ml", parameters=BulkAnnotateParameters, startable=True)(bulk.annotate_corpus)
register("run_pipeline", queue="ml", parameters=RunPipelineParameters, startable=True)(pipeline.run_pipeline)
register("skill_train", queue="ml", parameters=SkillTrainParameters, startable=True)(botstalk.skill_train)
register("nli_train", queue="ml", parameters=NliTrainParameters, startable=True)(botstalk.nli_train)
register("botstalk", queue="ml", parameters=BotsTalkParameters, startable=True)(botstalk.botstalk)
register("skill_label", queue="ml", parameters=SkillLabelParameters, startable=True)(botstalk.skill_label)
register("dataset_utility", queue="ml", parameters=DatasetUtilityParameters, startable=True)(
    dataset_utility.dataset_utility
)
