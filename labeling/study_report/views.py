"""The study report page (researchers only, linked from the campaign page) and its downloads."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from labeling.models import LAST_TURN_LABEL, Campaign
from labeling.researcher_views import staff_required
from labeling.study_report.figures import build_report
from labeling.study_report.render import FIGURE_NAMES, methods_paragraph, to_json, to_latex, to_markdown

DOWNLOADS = {
    "md": (to_markdown, "text/markdown; charset=utf-8"),
    "tex": (to_latex, "application/x-tex; charset=utf-8"),
    "json": (to_json, "application/json"),
}


def _label_campaign(pk: int) -> Campaign:
    campaign = get_object_or_404(Campaign, pk=pk)
    if campaign.task_type != LAST_TURN_LABEL:
        raise Http404("the study report covers label campaigns; this campaign's figures are on its results page")
    return campaign


@staff_required
@require_GET
def study_report_page(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = _label_campaign(pk)
    report = build_report(campaign)
    data = report.as_dict()
    per_label = [
        {"label": label, "figures": [figures[name] for name in FIGURE_NAMES]}
        for label, figures in data["agreement"]["per_label"].items()
    ]
    context = {
        "campaign": campaign,
        "report": data,
        "overall": [(FIGURE_NAMES[name], estimate) for name, estimate in data["agreement"]["overall"].items()],
        "figure_names": list(FIGURE_NAMES.values()),
        "per_label": per_label,
        "methods": methods_paragraph(report),
        "latex": to_latex(report),
    }
    return render(request, "labeling/researcher/study_report.html", context)


@staff_required
@require_GET
def study_report_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404(f"format {fmt!r}: use md, tex or json")
    render_as, content_type = DOWNLOADS[fmt]
    campaign = _label_campaign(pk)
    response = HttpResponse(render_as(build_report(campaign)), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-study-report.{fmt}"'
    return response
