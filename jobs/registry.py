"""The job registry: every job kind, its function, its queue and its typed parameters.

A job is a plain function `fn(job, **parameters) -> dict`. Each app declares its own in its
`jobs.py` (found by autodiscovery when Django starts, see jobs.apps):

    class Parameters(JobParameters):
        threshold: float = Field(0.92, ge=0.5, le=1.0, description="...")

    @register("sbert_expand", queue="ml", parameters=Parameters, startable=True)
    def sbert_expand(job, threshold=0.92): ...

The parameter schema (pydantic) is the one place the bounds live: the Jobs page renders its form
from it, the API validates with it and the OpenAPI schema shows it. No Django model is imported
here, so any module may import the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

JobFunction = Callable[..., dict[str, Any]]
# "landing": the Prolific landing check only (labeling.platforms.prolific_checks), served by a worker process of
# its own, so a sync, a publish or a long job never keeps a participant on the "Checking" page
QUEUES = ("default", "ml", "landing")


class JobParameters(BaseModel):
    """Base of every job's parameter schema: unknown parameters are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


class UnknownJob(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class InvalidParameters(ValueError):
    """Bad job parameters; `errors` maps each field to its messages (like a DRF 400 body)."""

    def __init__(self, kind: str, errors: dict[str, list[str]]):
        self.kind, self.errors = kind, errors
        detail = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in errors.items())
        super().__init__(f"bad parameters for {kind}: {detail}")


@dataclass(frozen=True)
class JobSpec:
    kind: str
    function: JobFunction
    queue: str
    parameters: type[JobParameters]
    startable: bool
    description: str
    # field name -> a line the Jobs page adds to the field's help, read when the form is built
    # (e.g. the calibrated threshold and its curve point); the app that owns the job supplies it
    field_notes: Callable[[], dict[str, str]] | None = None

    def validate(self, raw: dict[str, Any] | None) -> dict[str, Any]:
        """The parameters with defaults filled in, as JSON-ready values, or InvalidParameters."""
        if raw is not None and not isinstance(raw, dict):
            raise InvalidParameters(self.kind, {"parameters": ["must be a JSON object"]})
        try:
            return self.parameters.model_validate(raw or {}).model_dump(mode="json")
        except ValidationError as error:
            raise InvalidParameters(self.kind, field_errors(error)) from None


_REGISTRY: dict[str, JobSpec] = {}


def register(
    kind: str,
    *,
    queue: str = "default",
    parameters: type[JobParameters] | None = None,
    startable: bool = False,
    field_notes: Callable[[], dict[str, str]] | None = None,
) -> Callable[[JobFunction], JobFunction]:
    """Register `fn` as the job `kind`. Torch jobs pass queue="ml" so GPU workers take them, the
    landing check queue="landing" (its own worker process);
    `startable` puts the job on the Jobs page and the API; `field_notes` adds live help to its form."""
    if queue not in QUEUES:
        raise ValueError(f"queue {queue!r} is not one of {', '.join(QUEUES)}")
    if startable and parameters is None:
        raise ValueError(f"startable job {kind!r} needs a parameter schema")

    def decorator(fn: JobFunction) -> JobFunction:
        description = (fn.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        schema = parameters or _open_parameters(kind)
        _REGISTRY[kind] = JobSpec(kind, fn, queue, schema, startable, description, field_notes)
        return fn

    return decorator


def _open_parameters(kind: str) -> type[JobParameters]:
    # Internal jobs started only by code (never from a form) may take any JSON object.
    return type(f"{kind}Parameters", (JobParameters,), {"model_config": ConfigDict(extra="allow")})


def get(kind: str) -> JobSpec:
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise UnknownJob(f"no job named {kind!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def startable() -> list[JobSpec]:
    return [spec for spec in _REGISTRY.values() if spec.startable]


def all_specs() -> list[JobSpec]:
    return list(_REGISTRY.values())


def field_errors(error: ValidationError) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "parameters"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "is not a parameter of this job"
        errors.setdefault(field, []).append(message)
    return errors
