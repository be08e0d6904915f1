"""The study report page (researchers only, linked from the campaign page) and its downloads."""

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.models import ModelVersion
from config.web.access import staff_required
from jobs.runtime import start_job
from labeling import task_types
from labeling.models import Campaign, RaterAnswer
from labeling.pages.researcher import ActionRefused, campaign_action
from labeling.reports.plots import study_report_plots
from labeling.reports.study.figures import build_report
from labeling.reports.study.methods import limitations_paragraph
from labeling.reports.study.render import (
    FIGURE_NAMES,
    methods_paragraph,
    to_json,
    to_latex,
    to_markdown,
    to_standalone_latex,
)
from labeling.reports.study.tables_render import CSV_TABLES, table_csv
from labeling.study_flow.report import survey_export

DOWNLOADS = {
    "md": (to_markdown, "text/markdown; charset=utf-8"),
    "tex": (to_latex, "application/x-tex; charset=utf-8"),
    "standalone.tex": (to_standalone_latex, "application/x-tex; charset=utf-8"),
    "json": (to_json, "application/json"),
    # the paper tables, one CSV each: rater-kappa.csv, pairwise-kappa.csv, ...
    **{
        f"{name}.csv": (lambda report, name=name: table_csv(report, name), "text/csv; charset=utf-8")
        for name in CSV_TABLES
    },
}


def _label_campaign(pk: int) -> Campaign:
    campaign = get_object_or_404(Campaign, pk=pk)
    if not task_types.of(campaign).study_report:
        raise Http404("the study report covers label campaigns; this campaign's figures are on its results page")
    return campaign


@staff_required
@require_GET
def study_report_page(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = _label_campaign(pk)
    report = build_report(campaign)
    data = report.as_dict()
    specific = {row["label"]: row for row in data["tables"]["specific_agreement"]}
    per_label = [
        {"label": label, "figures": [figures[name] for name in FIGURE_NAMES], "specific": specific.get(label)}
        for label, figures in data["agreement"]["per_label"].items()
    ]
    context = {
        "campaign": campaign,
        "report": data,
        "overall": [(FIGURE_NAMES[name], estimate) for name, estimate in data["agreement"]["overall"].items()],
        "figure_names": list(FIGURE_NAMES.values()),
        "per_label": per_label,
        "methods": methods_paragraph(report),
        "limitations": limitations_paragraph(report),
        "latex": to_latex(report),
        "plots": study_report_plots(data),
        "csv_tables": [f"{name}.csv" for name in CSV_TABLES],
        "rater_problems": RaterAnswer.objects.filter(campaign=campaign)
        .exclude(status=RaterAnswer.OK)
        .order_by("rater", "turn_id")[:50],
        "model_versions": ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-pk")[:50],
        "endpoint_model": settings.MODEL_RATER_MODEL if settings.MODEL_RATER_ENDPOINT_URL else "",
    }
    return render(request, "labeling/researcher/study_report.html", context)


@staff_required
@require_GET
def study_report_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404(f"format {fmt[:40]!r}: use one of {', '.join(DOWNLOADS)}")
    render_as, content_type = DOWNLOADS[fmt]
    campaign = _label_campaign(pk)
    response = HttpResponse(render_as(build_report(campaign)), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-study-report.{fmt}"'
    return response


@staff_required
@require_GET
def survey_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The campaign's exit-survey answers (labeling.study_flow.report.survey_export): csv or jsonl."""
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        export = survey_export(campaign, fmt)
    except ValueError as error:
        raise Http404(str(error)) from error
    response = HttpResponse(export.text, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response


@campaign_action()
def study_report_rate(request: HttpRequest, campaign: Campaign) -> str | HttpResponse:
    """Queue a model rater (labeling.model_rater): a model version of ours, or the endpoint's chat model."""
    raw = request.POST.get("model_version", "").strip()
    parameters: dict = {"campaign_id": campaign.pk}
    if raw:
        if not raw.isdigit() or not ModelVersion.objects.filter(pk=int(raw)).exists():
            return HttpResponseBadRequest(f"model_version: no model version {raw[:20]!r}")
        parameters["model_version_id"] = int(raw)
    elif not settings.MODEL_RATER_ENDPOINT_URL or not settings.MODEL_RATER_MODEL:
        raise ActionRefused("No endpoint configured: set MODEL_RATER_ENDPOINT_URL and MODEL_RATER_MODEL.")
    job = start_job("labeling.model_rater", parameters, user=request.user)
    return f"Model rater queued as job {job.pk}; its figures appear on the study report when it is done."
