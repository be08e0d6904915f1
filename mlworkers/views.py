"""The researcher's job pages (staff only): list and start jobs, watch their progress, read a model
version's evaluation. Starting a job only records a JobRun and queues it; no model work runs here."""

import json

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import ModelVersion
from mlworkers.jobs import start_job
from mlworkers.models import JobRun

# The jobs a researcher may start from the page, with the parameters the form starts from.
STARTABLE_JOBS: dict[str, dict] = {
    "run_pipeline": {
        "steps": ["weak_train", "weak_apply", "rank_candidates"],
        "campaign_name": "Weak-labeled candidates",
    },
    "weak_train": {"data_path": None, "fine_tune": False},
    "weak_apply": {"model_version_id": None, "chunk_size": 2000},
    "rank_candidates": {"min_confidence": 0.9, "per_label": 250, "campaign_name": None},
    "gold_split": {},
    "sbert_expand": {"threshold": 0.92},
    "self_label_rounds": {"epochs": 2, "self_per_label": 100},
    "bulk_annotate": {"model_version_id": None},
}


class BadJobRequest(ValueError):
    pass


def parse_job_request(kind: str, raw_parameters: str) -> dict:
    """The parameters of a start request, or BadJobRequest saying what is wrong."""
    if kind not in STARTABLE_JOBS:
        raise BadJobRequest(f"{kind!r} is not a job you can start here")
    try:
        parameters = json.loads(raw_parameters or "{}")
    except json.JSONDecodeError as error:
        raise BadJobRequest(f"parameters are not valid JSON: {error.msg} (line {error.lineno})")
    if not isinstance(parameters, dict):
        raise BadJobRequest("parameters must be a JSON object")
    return {key: value for key, value in parameters.items() if value is not None}


@staff_member_required
def job_list(request: HttpRequest) -> HttpResponse:
    context = {
        "jobs": JobRun.objects.all()[:100],
        "model_versions": ModelVersion.objects.all()[:50],
        "startable": [(kind, json.dumps(defaults, indent=1)) for kind, defaults in STARTABLE_JOBS.items()],
    }
    return render(request, "mlworkers/job_list.html", context)


@staff_member_required
@require_POST
def job_start(request: HttpRequest) -> HttpResponse:
    kind = request.POST.get("kind", "")
    try:
        parameters = parse_job_request(kind, request.POST.get("parameters", ""))
    except BadJobRequest as error:
        messages.error(request, str(error))
        return redirect("mlworkers:job_list")
    job = start_job(kind, parameters, user=request.user)
    messages.success(request, f"Queued {kind} as job #{job.pk}.")
    return redirect("mlworkers:job_detail", job_id=job.pk)


@staff_member_required
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(JobRun, pk=job_id)
    children = JobRun.objects.filter(pk__in=job.result.get("jobs", [])) if job.kind == "run_pipeline" else []
    return render(request, "mlworkers/job_detail.html", {"job": job, "children": children})


@staff_member_required
def job_status(request: HttpRequest, job_id: int) -> HttpResponse:
    """The progress partial htmx polls every 2 s; once the job is finished it renders without the
    polling attribute, so polling stops."""
    job = get_object_or_404(JobRun, pk=job_id)
    return render(request, "mlworkers/partials/job_status.html", {"job": job})


@staff_member_required
def model_version_detail(request: HttpRequest, version_id: int) -> HttpResponse:
    version = get_object_or_404(ModelVersion, pk=version_id)
    report = version.metrics.get("test") or version.metrics.get("report") or {}
    confusion = _confusion_rows(report)
    context = {
        "version": version,
        "report": report,
        "per_label": [row for row in report.get("per_label", []) if row.get("support") or row.get("predicted")],
        "confusion": confusion,
        "rounds": version.metrics.get("rounds", []),
    }
    return render(request, "mlworkers/model_version_detail.html", context)


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
