"""The chain (Django side): job `run_pipeline`, the model-in-the-loop steps in order.

    weak_train         the weak sentence labeler (mlworkers.classifier.weak_labeler)
    weak_apply         its Prediction rows for every turn (mlworkers.classifier.weak_labeler)
    suggest_train      the suggestion model learned from crowd gold (mlworkers.classifier.suggestions)
    rank_candidates    prefilter + readability, top N per label -> a Campaign's HITs (mlworkers.chain.candidates)
    sbert_expand       TurnLabel(sbert) for unlabeled dialogues similar to a gold one (mlworkers.expansion.sbert)
    self_label_rounds  the four rounds of Table 5 (mlworkers.rounds.self_labeling)
    bulk_annotate      a Prediction of the dialogue classifier for every turn (mlworkers.classifier.bulk)

Each step runs as its own JobRun inside the worker running the chain; what a step returns (a model
version) feeds the next one's parameters, and steps that need crowd gold are skipped while there is
none. Writes only those JobRuns; the steps write the rest. Every job is declared, with its typed
parameters, in `mlworkers/jobs.py`; no job runs inside a web request: views only queue them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from annotation.models import ModelVersion, TurnLabel
from jobs import registry
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress, run_job
from mlworkers.chain.candidates import DEFAULT_CAMPAIGN_NAME
from mlworkers.naming import stamped

STEPS = (
    "weak_train",
    "weak_apply",
    "suggest_train",
    "rank_candidates",
    "sbert_expand",
    "self_label_rounds",
    "bulk_annotate",
)
NEEDS_GOLD = {"suggest_train", "sbert_expand", "self_label_rounds", "bulk_annotate"}


def _step_parameters(step: str, options: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    if step == "weak_train":
        chosen = {k: options[k] for k in ("data_path", "model_name", "fine_tune") if options.get(k)}
        return chosen | ({"epochs": options["weak_epochs"]} if options.get("weak_epochs") else {})
    if step == "weak_apply":
        return {"model_version_id": outputs.get("weak_version")}
    if step == "rank_candidates":
        keys = ("min_confidence", "per_label", "campaign_name", "campaign_id")
        chosen = {k: options[k] for k in keys if options.get(k) is not None}
        if chosen.get("campaign_name") == DEFAULT_CAMPAIGN_NAME:  # a generated name says when it was made
            chosen["campaign_name"] = stamped(DEFAULT_CAMPAIGN_NAME)
        # empty: the model suggesting now (gold-trained once there is gold, else the newest weak labeler)
        version = outputs.get("suggest_version")
        return ({"model_version_id": version} if version else {}) | chosen
    if step == "self_label_rounds":
        return {k: options[k] for k in ("epochs", "recipe") if options.get(k)}
    if step == "bulk_annotate":
        return {"model_version_id": _chosen_dialogue_version(outputs)}
    return {}


def run_steps(
    steps: Sequence[str],
    options: dict[str, Any] | None = None,
    *,
    stdout: TextIO | None = None,
    user=None,
    on_step: Callable[[int, str], None] | None = None,
) -> list[JobRun]:
    """Run `steps` in order in this process, each as its own JobRun; a failure stops the chain
    (the error is on the failed JobRun). Steps that need gold labels are skipped while there are none."""
    options, outputs, done = options or {}, {}, []
    say = (lambda text: stdout.write(text + "\n")) if stdout else (lambda text: None)
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ValueError(f"unknown steps {unknown}; known: {', '.join(STEPS)}")
    for index, step in enumerate(steps, start=1):
        skipped = _why_skip(step, outputs)
        if skipped:
            say(f"- {step}: skipped, {skipped}")
        else:
            job = _run_step(step, _step_parameters(step, options, outputs), user, say)
            done.append(job)
            outputs.update(_outputs_of(step, job.result))
        if on_step:
            on_step(index, step)
    return done


def _why_skip(step: str, outputs: dict[str, Any]) -> str:
    if step in NEEDS_GOLD and not TurnLabel.objects.filter(source=TurnLabel.CROWD).exists():
        return "no crowd gold labels yet (aggregate a campaign first)"
    if step == "bulk_annotate" and _chosen_dialogue_version(outputs) is None:
        return "no dialogue classifier yet (run self_label_rounds first)"
    return ""


def _run_step(step: str, parameters: dict[str, Any], user, say) -> JobRun:
    """One step as its own JobRun, run here, inside the worker running the chain."""
    job = JobRun.objects.create(kind=step, parameters=registry.get(step).validate(parameters), created_by=user)
    started = time.perf_counter()
    say(f"- {step} (job #{job.pk}) ...")
    try:
        result = run_job(job.pk)
    except Exception as error:
        say(f"  failed: {type(error).__name__}: {error}")
        raise
    job.refresh_from_db()
    if job.status != JobRun.SUCCEEDED:
        raise JobCannotRun(f"step {step} (job #{job.pk}) {job.status}: {job.error or job.message}")
    say(f"  done in {time.perf_counter() - started:.1f} s: {job.message or _summary(result)}")
    return job


def _chosen_dialogue_version(outputs: dict[str, Any]) -> int | None:
    """The classifier this run's rounds produced, else the newest dialogue classifier."""
    if "dialogue_version" in outputs:
        return outputs["dialogue_version"]
    newest = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-created_at", "-pk").first()
    return newest.pk if newest else None


def _outputs_of(step: str, result: dict[str, Any]) -> dict[str, Any]:
    if step == "weak_train":
        return {"weak_version": result["model_version"]}
    if step == "suggest_train":
        return {"suggest_version": result["model_version"]}
    if step == "self_label_rounds":
        return {"dialogue_version": result["model_version"]}
    return {}


def _summary(result: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in result.items() if isinstance(v, int | float | str))[:200]


def run_pipeline(job: JobRun, steps: Sequence[str] | None = None, **options) -> dict[str, Any]:
    """The chain as one job: each step its own JobRun, run inside this worker one after another
    (queuing them would deadlock a worker with concurrency 1 waiting on itself)."""
    steps = list(steps or STEPS)
    log: list[str] = []

    def note(text: str) -> None:
        log.append(text.strip())
        report_progress(job, job.progress_done, len(steps), text.strip())

    report_progress(job, 0, len(steps), "starting")
    children = run_steps(
        steps,
        options,
        stdout=_LineWriter(note),
        user=job.created_by,
        on_step=lambda index, step: report_progress(job, index, len(steps), f"{step} done"),
    )
    return {"jobs": [child.pk for child in children], "log": log}


class _LineWriter:
    def __init__(self, note: Callable[[str], None]):
        self.note = note

    def write(self, text: str) -> None:
        if text.strip():
            self.note(text)
