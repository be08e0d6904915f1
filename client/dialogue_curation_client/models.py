"""What the API answers, as typed dataclasses. Each names the OpenAPI component it reads
(`COMPONENT`); tests/client/test_schema_drift.py checks every field against the schema the server
serves, so a renamed or removed field fails CI instead of a researcher's script."""

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Self


class FromJson:
    COMPONENT: ClassVar[str]
    NOT_IN_SCHEMA: ClassVar[tuple[str, ...]] = ()  # read from headers, not the body

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> Self:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        missing = sorted(known - set(data) - set(extra) - _defaulted(cls))
        if missing:
            raise ValueError(f"{cls.__name__}: the server's answer lacks {', '.join(missing)}")
        values = {name: data[name] for name in known if name in data}
        return cls(**values, **extra)

    @classmethod
    def schema_fields(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.name not in cls.NOT_IN_SCHEMA]  # type: ignore[arg-type]


def _defaulted(cls: type) -> set[str]:
    from dataclasses import MISSING

    return {f.name for f in fields(cls) if f.default is not MISSING or f.default_factory is not MISSING}


@dataclass(frozen=True)
class Campaign(FromJson):
    COMPONENT: ClassVar[str] = "Campaign"

    id: int
    name: str
    status: str  # draft, open, paused or closed
    task_type: str
    language: str
    labels: list[str]
    hit_count: int
    dialogues_per_hit: int
    workers_per_hit: int
    created_at: str


@dataclass(frozen=True)
class Job(FromJson):
    COMPONENT: ClassVar[str] = "JobRun"
    UNFINISHED: ClassVar[tuple[str, ...]] = ("queued", "running")

    id: int
    kind: str
    status: str  # queued, running, succeeded, failed or cancelled
    percent: int
    message: str
    result: Any
    error: str
    created_at: str
    finished_at: str | None

    @property
    def finished(self) -> bool:
        return self.status not in self.UNFINISHED

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"


@dataclass(frozen=True)
class Progress(FromJson):
    """How far a campaign is, from its report as last computed (`as_of`; `current` False while
    newer figures are being computed)."""

    COMPONENT: ClassVar[str] = "CampaignProgress"
    NOT_IN_SCHEMA: ClassVar[tuple[str, ...]] = ("as_of", "current")

    hits: int
    tiebreak_hits: int
    assignments_needed: int
    assignments_submitted: int
    assignments_pending: int  # submitted on a platform that has not confirmed them yet
    assignments_in_progress: int
    assignments_rejected: int
    completion: float | None  # submitted / needed, 0 to 1 (None: no seats)
    as_of: str = ""
    current: bool = True


@dataclass(frozen=True)
class Table4(FromJson):
    """The EDOS paper's Table 4 figures of the study."""

    COMPONENT: ClassVar[str] = "Table4"

    dialogues: int
    majority: int
    majority_share: float | None
    majority_gold: int
    fleiss_kappa: float | None
    quiz_workers: int
    quiz_bonus_share: float | None
    quiz_bonus_mark: int
    typed_dialogues: int


@dataclass(frozen=True)
class StudyReport(FromJson):
    """The study report (docs/analysis/study-report.md): Table 4, agreement with intervals, the crowd."""

    COMPONENT: ClassVar[str] = "StudyReport"

    campaign: dict[str, Any]
    table4: Table4
    agreement: dict[str, Any]
    crowd: dict[str, Any]
    model_raters: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any], **extra: Any) -> Self:
        return super().from_json({**data, "table4": Table4.from_json(data.get("table4") or {})}, **extra)
