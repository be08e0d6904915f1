"""SBERT expansion's threshold, calibrated to the encoder in use (Django side).

    calibrate_expansion   the job: the label-transfer curve of the configured encoder on held-out
                          gold (mlworkers.ml.expansion.calibration), stored with a ModelVersion of
                          kind "encoder" (metrics["expansion_calibration"]), and its proposed threshold
    expansion_threshold   what `sbert_expand` and `self_label_rounds` use when their threshold is left
                          empty: the newest calibration of ENCODER_MODEL, else the paper's constant
    threshold_notes       the Jobs page's help lines: the chosen value's point on the curve

A ModelVersion is written by one function here (`save_calibration`); nothing else writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from annotation.models import ModelVersion, TurnLabel
from jobs.models import JobRun
from jobs.runtime import report_progress
from mlworkers.expansion.vectors import DialogueVectors, turn_embedding_store
from mlworkers.gold import NoGoldLabels, gold_labels, gold_split
from mlworkers.ml.expansion import calibration as core
from mlworkers.ml.expansion.similarity import PAPER_SBERT_THRESHOLD, PAPER_SECOND_SBERT_THRESHOLD
from mlworkers.naming import stamped, unique_name

CALIBRATION_KEY = "expansion_calibration"
GIVEN, CALIBRATED, PAPER = "given", "calibrated", "paper"


@dataclass(frozen=True)
class ChosenThreshold:
    """A threshold, where it came from, and what the encoder's calibration predicts for it."""

    value: float
    source: str  # GIVEN, CALIBRATED or PAPER
    encoder: str
    calibration_version: int | None = None
    predicted_precision: float | None = None
    predicted_coverage: float | None = None

    def as_result(self, prefix: str = "") -> dict[str, Any]:
        return {
            f"{prefix}threshold": self.value,
            f"{prefix}threshold_source": self.source,
            f"{prefix}predicted_precision": self.predicted_precision,
            f"{prefix}predicted_coverage": self.predicted_coverage,
            f"{prefix}calibration_version": self.calibration_version,
        }

    def note(self) -> str:
        where = {
            GIVEN: "as given",
            CALIBRATED: f"calibrated for {self.encoder} (model version {self.calibration_version})",
            PAPER: "the paper's"
            + ("" if self.calibration_version else f" ({self.encoder} has no calibration: run calibrate_expansion)"),
        }[self.source]
        return f"threshold {self.value:g}, {where}{_predicted(self.predicted_precision, self.predicted_coverage)}"


def _predicted(precision: float | None, coverage: float | None) -> str:
    if precision is None or coverage is None:
        return ""
    return f"; predicted precision {precision:.2f}, coverage {coverage:.1%} of held-out gold"


def latest_calibration(encoder: str | None = None) -> ModelVersion | None:
    """The newest calibrated ModelVersion of `encoder` (default ENCODER_MODEL)."""
    encoder = encoder or settings.ENCODER_MODEL
    versions = ModelVersion.objects.filter(kind=ModelVersion.ENCODER, base_model=encoder)
    return versions.filter(metrics__has_key=CALIBRATION_KEY).order_by("-created_at", "-pk").first()


def expansion_threshold(
    given: float | None, *, paper: float = PAPER_SBERT_THRESHOLD, encoder: str | None = None
) -> ChosenThreshold:
    """`given` when set, else the calibrated threshold of the encoder in use, else `paper`; with the
    curve's point for the value when the encoder has a calibration."""
    encoder = encoder or settings.ENCODER_MODEL
    version = latest_calibration(encoder)
    stored = version.metrics[CALIBRATION_KEY] if version else None
    if given is not None:
        value, source = float(given), GIVEN
    elif stored:
        value, source = float(stored["threshold"]), CALIBRATED
    else:
        value, source = float(paper), PAPER
    point = core.point_at(core.curve_from_json(stored), value) if stored else None
    return ChosenThreshold(
        value,
        source,
        encoder,
        version.pk if version else None,
        point.precision if point else None,
        point.coverage if point else None,
    )


def rounds_thresholds(
    first: float | None, second: float | None, *, paper: bool = False
) -> tuple[ChosenThreshold, ChosenThreshold]:
    """The rounds' two thresholds. Left empty, both follow the calibration (the curve measures
    gold-to-gold transfer, and a self-labeled source is no surer than gold); without one, or for
    the paper's recipe (`paper`), the paper's 0.92 and 0.9."""
    if paper:
        return (
            _paper_threshold(first, PAPER_SBERT_THRESHOLD),
            _paper_threshold(second, PAPER_SECOND_SBERT_THRESHOLD),
        )
    return expansion_threshold(first), expansion_threshold(second, paper=PAPER_SECOND_SBERT_THRESHOLD)


def _paper_threshold(given: float | None, paper: float) -> ChosenThreshold:
    if given is not None:
        return expansion_threshold(given)
    chosen = expansion_threshold(paper)  # its curve point, if the encoder has a calibration
    return ChosenThreshold(paper, PAPER, chosen.encoder, chosen.calibration_version,
                           chosen.predicted_precision, chosen.predicted_coverage)  # fmt: skip


def calibrate_expansion(
    job: JobRun,
    precision_margin: float = core.DEFAULT_PRECISION_MARGIN,
    target_precision: float | None = None,
    min_matches: int = core.MIN_MATCHES,
    split_seed: int = 13,
) -> dict[str, Any]:
    """Measures, for ENCODER_MODEL, the precision and coverage of nearest-gold label transfer across
    thresholds on held-out train/validation gold, stores the curve and proposes a threshold."""
    gold_split(job)
    gold = gold_labels([TurnLabel.TRAIN, TurnLabel.VALIDATION])
    if len(gold) < 2:
        raise NoGoldLabels("the calibration needs crowd gold labels on at least two train or validation dialogues")
    encoder = settings.ENCODER_MODEL
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    keys = sorted(gold)
    report_progress(job, 0, 1, f"matching {len(keys)} gold dialogues, half against half")
    calibration = core.calibrate(
        encoder, DialogueVectors(store)(keys), [gold[key] for key in keys], split_seed=split_seed,
        precision_margin=precision_margin, target_precision=target_precision, min_matches=min_matches,
    )  # fmt: skip
    chosen = {"precision_margin": precision_margin, "target_precision": target_precision, "min_matches": min_matches}
    version = save_calibration(calibration, job, chosen)
    stored = calibration.as_json()
    report_progress(job, 1, 1, _summary(stored))
    return {"model_version": version.pk, **{key: value for key, value in stored.items() if key != "curve"}}


def _summary(stored: dict[str, Any]) -> str:
    paper = _predicted(stored["paper_threshold_precision"], stored["paper_threshold_coverage"])
    return (
        f"{stored['encoder']}: threshold {stored['threshold']:g} ({stored['rule']})"
        f"{_predicted(stored['precision'], stored['coverage'])}; at the paper's {stored['paper_threshold']:g}{paper or ': no match'}"
    )


def save_calibration(
    calibration: core.Calibration, job: JobRun | None = None, options: dict[str, Any] | None = None
) -> ModelVersion:
    """The one writer of calibration rows: a ModelVersion of kind encoder, no files."""
    name = stamped(f"{calibration.encoder} (expansion calibration)")
    return ModelVersion.objects.create(
        kind=ModelVersion.ENCODER,
        name=unique_name(name, lambda candidate: ModelVersion.objects.filter(name=candidate).exists()),
        base_model=calibration.encoder,
        training_data={"job": job.pk if job else None, "gold": calibration.seeds + calibration.held_out},
        hyperparameters={"split_seed": calibration.split_seed, **(options or {})},
        metrics={CALIBRATION_KEY: calibration.as_json()},
    )


def threshold_notes(fields: dict[str, float]) -> dict[str, str]:
    """Help lines for the Jobs page: per threshold field (name -> the paper's value), the value an
    empty field resolves to and the curve's points, so the chosen value's precision and coverage show."""
    notes = {}
    for name, paper in fields.items():
        chosen = expansion_threshold(None, paper=paper)
        version = ModelVersion.objects.filter(pk=chosen.calibration_version).first()
        points = (
            _curve_points(core.curve_from_json(version.metrics[CALIBRATION_KEY]), chosen.value, paper)
            if version
            else ""
        )
        notes[name] = f"Empty: {chosen.note()}." + (
            f" Curve (threshold: precision / coverage): {points}." if points else ""
        )
    return notes


def _curve_points(curve: list[core.CurvePoint], chosen: float, paper: float) -> str:
    """Every 0.05, the chosen value and the paper's: "0.85: 0.95 / 66.7%, 0.92 (paper): ..."."""
    shown = [
        p
        for p in curve
        if p.precision is not None and (round(p.threshold * 100) % 5 == 0 or p.threshold in (chosen, paper))
    ]
    return ", ".join(
        f"{p.threshold:.2f}{' (paper)' if p.threshold == paper else ''}: {p.precision:.2f} / {p.coverage:.1%}"
        for p in shown
    )
