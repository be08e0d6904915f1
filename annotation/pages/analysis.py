"""Staff-only analysis pages and the export job pages. Views parse the request, call the query
helpers and pure functions in `annotation.analysis` / `annotation.export`, and render."""

import hashlib
import io
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.analysis import queries
from annotation.analysis.charts import distribution_figure, shares
from annotation.analysis.evaluation import confusion_figure, evaluation_report
from annotation.analysis.examples import ExampleFilter, select_examples
from annotation.analysis.gaps import gap_histogram_figure, sum_gap_histograms
from annotation.analysis.kl import REFERENCE, UNION, ReferenceFileError, compare_distributions, parse_label_counts
from annotation.analysis.plots import bar_chart
from annotation.analysis.records import GOLD, KINDS, SILVER
from annotation.analysis.sankey import first_labels, label_paths, sankey_figure, sankey_flows, standalone_html
from annotation.analysis.skills import summarise as summarise_skills
from annotation.analysis.statistics import dataset_statistics
from annotation.analysis.utility import METRICS, utility_table
from annotation.export.dialogues import DIALOGUE, TURN
from annotation.export.jobs import exports_root
from annotation.export.query import ExportError, ExportFilters, check_request
from annotation.export.rows import SPLITS
from annotation.export.writers import FORMATS
from annotation.models import ModelVersion, TurnSkill
from config.web.access import staff_required
from jobs.models import JobRun
from jobs.runtime import start_job

KIND_CHOICES = [(kind, kind) for kind in KINDS]
MAX_REFERENCE_BYTES = 1_000_000
STATISTICS_CACHE_SECONDS = 600


class KindForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES, initial=GOLD, required=False)
    model_version = forms.IntegerField(required=False, min_value=1, help_text="silver: default newest dialogue model")

    def chosen(self) -> tuple[str, ModelVersion | None]:
        data = self.cleaned_data if self.is_valid() else {}
        kind = data.get("kind") or GOLD
        return kind, queries.silver_version(data.get("model_version")) if kind == SILVER else None


class CompareForm(KindForm):
    reference = forms.FileField(help_text="CSV with label,count rows (e.g. EmpatheticDialogues' label counts)")
    smoothing = forms.FloatField(initial=1.0, min_value=0.0)
    support = forms.ChoiceField(
        choices=[(UNION, "every label either side has"), (REFERENCE, "the reference's labels only")], initial=UNION
    )


class FlowForm(KindForm):
    start_label = forms.CharField(required=False)


class ExampleForm(KindForm):
    label = forms.CharField(required=False)
    min_confidence = forms.FloatField(required=False, min_value=0.0, max_value=1.0)
    max_confidence = forms.FloatField(required=False, min_value=0.0, max_value=1.0)
    limit = forms.IntegerField(required=False, min_value=1, max_value=200, initial=20)


class ExportForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES)
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS])
    label = forms.CharField(required=False)
    min_confidence = forms.FloatField(required=False, min_value=0.0, max_value=1.0)
    source = forms.CharField(required=False)
    split = forms.ChoiceField(choices=[("", "any"), *[(s, s) for s in SPLITS]], required=False)
    model_version = forms.IntegerField(required=False, min_value=1)
    layout = forms.ChoiceField(
        choices=[(TURN, "turn: a record per label"), (DIALOGUE, "dialogue: a record per dialogue, all turns")],
        required=False,
        initial=TURN,
    )


def _common(**context) -> dict:
    context.setdefault("model_versions", ModelVersion.objects.order_by("-created_at", "-pk").only("pk", "name", "kind"))
    context.setdefault("label_names", queries.taxonomy_order())
    return context


def _figure(figure: dict) -> dict:
    # handed to the template's json_script filter, which escapes it safely for a <script> tag
    return figure


@staff_required
def analysis(request: HttpRequest) -> HttpResponse:
    """Table 3 (sizes) and Table 9 (per-label counts) for gold, extended and silver labels."""
    form = KindForm(request.GET or None)
    silver = queries.silver_version(form.cleaned_data.get("model_version") if form.is_valid() else None)
    order = queries.taxonomy_order()
    key = f"analysis-statistics:{silver.pk if silver else 0}:{queries.data_version()}"
    columns = cache.get_or_set(key, lambda: _statistics_columns(silver), STATISTICS_CACHE_SECONDS)
    tables = {kind: stats.label_rows(order) for kind, stats in columns.items() if kind != "corpus"}
    chart = distribution_figure(
        {kind: shares(stats.turns_by_label) for kind, stats in columns.items() if kind != "corpus"},
        [name for name in order if any(stats.turns_by_label[name] for stats in columns.values())],
        "Label distribution (share of labeled turns)",
    )
    has_labels = any(stats.turns_by_label for kind, stats in columns.items() if kind != "corpus")
    context = _common(
        form=form, columns=columns, tables=tables, silver=silver, chart=_figure(chart), has_labels=has_labels
    )
    return render(request, "annotation/analysis/statistics.html", context)


def _statistics_columns(silver: ModelVersion | None) -> dict:
    # one streamed pass per column (about 50k rows/s): cached because a large corpus takes seconds
    columns = {"corpus": dataset_statistics(queries.corpus_turns())}
    for kind in KINDS:
        if kind == SILVER and silver is None:
            continue
        columns[kind] = dataset_statistics(queries.labeled_turns(kind, silver.pk if kind == SILVER else None))
    return columns


@staff_required
@require_http_methods(["GET", "POST"])
def analysis_compare(request: HttpRequest) -> HttpResponse:
    """Our label distribution against an uploaded reference, and D_KL(ours || reference)."""
    form = CompareForm(request.POST or None, request.FILES or None)
    comparison = chart = None
    if request.method == "POST" and form.is_valid():
        kind, version = form.chosen()
        try:
            reference = _read_reference(form.cleaned_data["reference"])
            if kind == SILVER and version is None:
                raise ReferenceFileError("no dialogue classifier version exists yet: silver labels need one")
            ours = queries.label_counts(kind, version.pk if version else None)
            comparison = compare_distributions(
                ours, reference, smoothing=form.cleaned_data["smoothing"], support=form.cleaned_data["support"]
            )
        except (ReferenceFileError, ValueError) as exc:
            form.add_error(None, str(exc))
        else:
            chart = _figure(
                distribution_figure(
                    {
                        f"ours ({kind})": {row.label: row.ours_share for row in comparison.rows},
                        "reference": {row.label: row.reference_share for row in comparison.rows},
                    },
                    [row.label for row in comparison.rows],
                    "Ours and the reference",
                )
            )
    context = _common(form=form, comparison=comparison, chart=chart)
    return render(request, "annotation/analysis/compare.html", context, status=400 if form.errors else 200)


def _read_reference(upload) -> dict[str, int]:
    if upload.size > MAX_REFERENCE_BYTES:
        raise ReferenceFileError(f"{upload.name}: larger than {MAX_REFERENCE_BYTES // 1000} kB")
    try:
        text = upload.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReferenceFileError(f"{upload.name}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    return parse_label_counts(io.StringIO(text, newline=""), filename=upload.name)


def default_flow_labels() -> dict[str, str]:
    """The labels the flows page shows unless asked for others: silver, of the newest dialogue
    classifier that labeled turns, else gold. A flow joins two adjacent labeled turns; the crowd
    labels one turn per dialogue (its last), so gold, like the extended labels grown from it, has
    no flow to draw, while bulk annotation labels every turn (the papers' Figure 3 is drawn so)."""
    version = queries.newest_labeling_silver_version()
    return {"kind": SILVER, "model_version": str(version.pk)} if version else {"kind": GOLD}


def _flows(request: HttpRequest):
    asked = request.GET.copy()
    if not asked.get("kind"):
        for name, value in default_flow_labels().items():
            asked[name] = asked.get(name) or value
    form = FlowForm(asked)
    kind, version = form.chosen()
    start_label = (form.cleaned_data.get("start_label") or None) if form.is_valid() else None
    if kind == SILVER and version is None:
        return form, kind, None
    version_id = version.pk if version else None

    def compute():
        return sankey_flows(label_paths(queries.flow_turns(kind, version_id)), start_label=start_label)

    # hashed: a label name may hold characters some cache backends refuse in keys
    key = "analysis-flows:" + _digest(kind, version_id, start_label, queries.data_version())
    return form, kind, cache.get_or_set(key, compute, STATISTICS_CACHE_SECONDS)


def _digest(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _flows_title(kind: str, flows) -> str:
    start = f", starting with {flows.start_label}" if flows.start_label else ""
    return f"{kind.capitalize()} label flows over the first {flows.depth} turns ({flows.dialogues} dialogues{start})"


@staff_required
def analysis_flows(request: HttpRequest) -> HttpResponse:
    form, kind, flows = _flows(request)
    # plotly draws no Sankey without a link (it throws "Invalid array length"): paths one turn
    # long, as when the crowd labeled only the last turn, show their labels as bars instead
    chart = _figure(sankey_figure(flows, _flows_title(kind, flows))) if flows and flows.links else None
    single_turn = bar_chart("Dialogues by label", first_labels(flows)) if flows and not flows.links else None
    context = _common(
        form=form, kind=kind, flows=flows, chart=chart, single_turn=single_turn, query=form.data.urlencode()
    )
    return render(request, "annotation/analysis/flows.html", context)


@staff_required
def analysis_flows_html(request: HttpRequest) -> HttpResponse:
    """The Sankey as one standalone HTML file (plotly.js inline) to keep or send around."""
    _form, kind, flows = _flows(request)
    if flows is None:
        raise Http404("no dialogue classifier version exists yet: silver labels need one")
    title = _flows_title(kind, flows)
    response = HttpResponse(standalone_html(sankey_figure(flows, title), title), content_type="text/html")
    response["Content-Disposition"] = f'attachment; filename="flows-{kind}.html"'
    return response


@staff_required
def analysis_gaps(request: HttpRequest) -> HttpResponse:
    histogram = sum_gap_histograms(queries.gap_histograms())
    split = settings.DIALOGUE_GAP_SECONDS
    chart = _figure(gap_histogram_figure(histogram, split)) if histogram.files else None
    context = {"histogram": histogram, "split_seconds": split, "share_below": histogram.share_below(split)}
    return render(request, "annotation/analysis/gaps.html", {**context, "chart": chart})


@staff_required
def analysis_examples(request: HttpRequest) -> HttpResponse:
    form = ExampleForm(request.GET or None)
    kind, version = form.chosen()
    data = form.cleaned_data if form.is_valid() else {}
    wanted = ExampleFilter(data.get("label") or None, data.get("min_confidence"), data.get("max_confidence"))
    limit = data.get("limit") or 20
    examples = []
    if kind != SILVER or version is not None:
        turns = queries.example_turns(kind, wanted, version.pk if version else None, limit)
        examples = select_examples(turns, wanted, limit)
    return render(request, "annotation/analysis/examples.html", _common(form=form, kind=kind, examples=examples))


@staff_required
def analysis_evaluation(request: HttpRequest) -> HttpResponse:
    versions = list(queries.evaluated_versions().only("pk", "name", "kind", "created_at", "metrics", "label_names"))
    chosen_id = request.GET.get("model_version")
    chosen = next((v for v in versions if str(v.pk) == chosen_id), versions[0] if versions else None)
    report = evaluation_report(chosen.metrics, chosen.label_names) if chosen else None
    chart = _figure(confusion_figure(report)) if report and report.confusion else None
    context = {"versions": versions, "chosen": chosen, "report": report, "chart": chart}
    return render(request, "annotation/analysis/evaluation.html", context)


@staff_required
def analysis_utility(request: HttpRequest) -> HttpResponse:
    """The dataset-utility table (Table 7) a `dataset_utility` job stored; the job runs from the Jobs page."""
    versions = list(queries.utility_versions().only("pk", "name", "kind", "created_at", "metrics", "artifact_dir"))
    chosen_id = request.GET.get("model_version")
    chosen = next((v for v in versions if str(v.pk) == chosen_id), versions[0] if versions else None)
    table = utility_table(chosen.metrics) if chosen else None
    context = {"versions": versions, "chosen": chosen, "table": table, "metrics": METRICS}
    return render(request, "annotation/analysis/utility.html", context)


@staff_required
@require_http_methods(["GET", "POST"])
def analysis_exports(request: HttpRequest) -> HttpResponse:
    """Start an export job (POST) and list the recent ones with their progress and download links."""
    form = ExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = start_export(form.cleaned_data, request.user)
        except ExportError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Export #{job.pk} queued.")
            return redirect("annotation:analysis_exports")
    jobs = JobRun.objects.filter(kind="export_dataset").order_by("-created_at")[:50]
    status = 400 if form.errors else 200
    return render(request, "annotation/analysis/exports.html", {"form": form, "jobs": jobs}, status=status)


def start_export(values: dict, user) -> JobRun:
    """Check an export request and queue the "export_dataset" job (also used by the API)."""
    filters = ExportFilters(
        label=values.get("label") or None,
        min_confidence=values.get("min_confidence"),
        source=values.get("source") or None,
        split=values.get("split") or None,
        model_version=values.get("model_version"),
    )
    layout = values.get("layout") or TURN
    filters = check_request(values["kind"], values["format"], filters, layout)
    parameters = {"kind": values["kind"], "format": values["format"], "layout": layout, **filters.as_dict()}
    return start_job("export_dataset", parameters, user=user)


@staff_required
def analysis_export_status(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(JobRun, pk=pk, kind="export_dataset")
    return render(request, "annotation/analysis/partials/export_job.html", {"job": job})


@staff_required
def analysis_export_download(request: HttpRequest, pk: int) -> FileResponse:
    """Serve a finished export: staff only, never through public media URLs."""
    job = get_object_or_404(JobRun, pk=pk, kind="export_dataset", status=JobRun.SUCCEEDED)
    path = export_path(job)
    if path is None:
        raise Http404("the export file is gone")
    return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name)


def export_path(job: JobRun) -> Path | None:
    name = Path(str(job.result.get("file", ""))).name  # never a path outside the exports folder
    path = exports_root() / name
    return path if name and path.is_file() else None


@staff_required
def analysis_skills(request: HttpRequest) -> HttpResponse:
    """Skill distributions per corpus from one skill classifier (default the newest with labels)."""
    versions = ModelVersion.objects.filter(kind=ModelVersion.SKILL).order_by("-created_at", "-pk")
    chosen = request.GET.get("model_version", "")
    version = versions.filter(pk=int(chosen)).first() if chosen.isdigit() else None
    if version is None:
        version = versions.filter(turn_skills__isnull=False).first() or versions.first()
    rows = TurnSkill.objects.filter(model_version=version).values_list(
        "turn__dialogue__source", "source", "skill", "distribution", "passed_mic"
    )
    skills, groups = summarise_skills(rows.iterator(chunk_size=5000)) if version else ([], [])
    if version:  # the classifier's own order: jsonb does not keep the stored key order
        skills = [s for s in version.label_names if s in skills] + [s for s in skills if s not in version.label_names]
    chart = distribution_figure(
        {group.name: group.mean_distribution(skills) for group in groups}, skills, "Mean skill distribution per corpus"
    )
    context = {"versions": versions, "version": version, "skills": skills, "groups": groups}
    context["rows"] = [(g, [(g.mean_distribution(skills)[s], g.top_shares(skills)[s]) for s in skills]) for g in groups]
    return render(request, "annotation/analysis/skills.html", {**context, "chart": _figure(chart) if groups else None})
