"""The researcher's model pages (staff only): the trained model versions and each one's evaluation.
The jobs that train them are started from the Jobs pages (jobs/)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import ModelVersion
from annotation.papers import PREFILTER_CONFIDENCE
from config.web.access import staff_required
from jobs.models import JobRun


@staff_required
def model_version_list(request: HttpRequest) -> HttpResponse:
    return render(request, "mlworkers/model_version_list.html", {"model_versions": ModelVersion.objects.all()[:200]})


@staff_required
def model_version_detail(request: HttpRequest, version_id: int) -> HttpResponse:
    version = get_object_or_404(ModelVersion, pk=version_id)
    report = version.metrics.get("test") or version.metrics.get("report") or {}
    confusion = _confusion_rows(report)
    calibration = report.get("calibration") or {}
    context = {
        "version": version,
        "report": report,
        "calibration": calibration,
        "temperature": version.metrics.get("temperature"),
        "uncalibrated": version.metrics.get("uncalibrated") or {},
        "candidates": version.metrics.get("candidates") or {},
        "chosen": version.metrics.get("chosen"),
        "evaluated_on": version.metrics.get("evaluated_on"),
        "diagram": reliability_diagram(calibration.get("bins") or []),
        "campaigns": version.campaigns.order_by("-created_at")[:20],
        "per_label": [row for row in report.get("per_label", []) if row.get("support") or row.get("predicted")],
        "confusion": confusion,
        "rounds": version.metrics.get("rounds", []),
        "why_no_gain": version.metrics.get("why_no_gain", []),
        "expansion": version.metrics.get("expansion_calibration"),
        "inference_runs": _inference_runs(version),
    }
    return render(request, "mlworkers/model_version_detail.html", context)


def _inference_runs(version: ModelVersion) -> list[dict]:
    """The precision its last bulk annotations ran in, and why: on a CPU, "auto" is fp32 or int8 as
    measured on the worker's machine (mlworkers.ml.classifier.cpu_precision), recorded in the job's result."""
    runs = JobRun.objects.filter(
        kind="bulk_annotate", status=JobRun.SUCCEEDED, parameters__model_version_id=version.pk
    ).order_by("-pk")[:5]
    return [
        {"job": run.pk, "precision": run.result.get("precision"), "choice": run.result.get("precision_choice")}
        for run in runs
        if run.result and run.result.get("precision")
    ]


def _confusion_rows(report: dict) -> dict:
    """The confusion matrix restricted to labels that occur (as truth or prediction), for display."""
    names, matrix = report.get("label_names", []), report.get("confusion", [])
    if not names or not matrix:
        return {}
    used = [i for i in range(len(names)) if sum(matrix[i]) or sum(row[i] for row in matrix)]
    return {
        "labels": [names[i] for i in used],
        "rows": [(names[i], [matrix[i][j] for j in used]) for i in used],
    }


DIAGRAM_SIZE, DIAGRAM_MARGIN = 240, 36


def reliability_diagram(bins: list[dict]) -> dict | None:
    """The reliability diagram's geometry, drawn as SVG by the template: per bin a bar as high as
    its accuracy and a mark at its mean confidence; the diagonal is perfect calibration."""
    if not any(row.get("count") for row in bins):
        return None
    size, margin = DIAGRAM_SIZE, DIAGRAM_MARGIN
    y = lambda value: round(margin + size * (1 - value), 1)  # noqa: E731
    bars = []
    for row in bins:
        if not row["count"]:
            continue
        left = round(margin + size * row["lower"], 1)
        width = round(size * (row["upper"] - row["lower"]) - 2, 1)
        bars.append(
            {
                "x": left + 1,
                "x2": round(left + 1 + width, 1),
                "y": y(row["accuracy"]),
                "width": width,
                "height": round(size * row["accuracy"], 1),
                "gap_y": y(row["confidence"]),
                "count": row["count"],
                "title": f"{row['lower']:.1f}–{row['upper']:.1f}: accuracy {row['accuracy']:.3f}, "
                f"mean confidence {row['confidence']:.3f}, {row['count']} predictions",
            }
        )
    ticks = [{"value": f"{t / 10:.1f}", "x": round(margin + size * t / 10, 1), "y": y(t / 10)} for t in range(0, 11, 2)]
    return {
        "width": size + 2 * margin,
        "height": size + 2 * margin,
        "left": margin,
        "right": margin + size,
        "top": margin,
        "bottom": margin + size,
        "bars": bars,
        "ticks": ticks,
        "threshold_x": round(margin + size * PREFILTER_CONFIDENCE, 1),  # the line the prefilter draws
    }
