"""The researcher's model pages (staff only): the trained model versions and each one's evaluation.
The jobs that train them are started from the Jobs pages (jobs/)."""

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import ModelVersion


@staff_member_required
def model_version_list(request: HttpRequest) -> HttpResponse:
    return render(request, "mlworkers/model_version_list.html", {"model_versions": ModelVersion.objects.all()[:200]})


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
