"""The researcher's pages (staff only): campaigns, their creation, and a dashboard per campaign.

Views are thin: every state change is one named function (build_hits, aggregate via a job,
accept_proposed_label, record_payments, block) that the API and commands call too.
"""

import csv
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Sum
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.export.cells import escape_cell
from config.pages import confirmation_page, confirmed
from jobs.runtime import start_job
from labeling import quiz_pool, task_types
from labeling.campaigns import (
    CampaignRefused,
    StatusChangeRefused,
    create_campaign,
    create_pairwise_campaign,
    set_campaign_status,
)
from labeling.entry_tokens import platform_links, rotate_entry_token
from labeling.forms import CampaignForm, PairwiseCampaignForm
from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, PlatformSubmission, Worker
from labeling.payments import approve_submitted, record_payments, resolve_unsure_payment
from labeling.platforms import get_platform
from labeling.platforms.costs import money
from labeling.platforms.summary import campaign_platforms
from labeling.platforms.sync import request_decision
from labeling.policy import answers_bought
from labeling.report_plots import report_plots
from labeling.reports import accept_proposed_label, campaign_report


def staff_required(view: Callable) -> Callable:
    """Anonymous visitors go to the login page; logged-in non-staff get 403, not a login loop."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapper


@staff_required
@require_GET
def campaign_list(request: HttpRequest) -> HttpResponse:
    campaigns = Campaign.objects.annotate(
        hit_count=Count("hits", distinct=True),
        needed=Sum("hits__required_workers"),
    ).order_by("-created_at")
    submitted = dict(Assignment.objects.done().values_list("hit__campaign_id").annotate(n=Count("pk")))
    rows = [(c, submitted.get(c.pk, 0)) for c in campaigns]
    return render(request, "labeling/researcher/campaign_list.html", {"rows": rows})


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_create(request: HttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign, hits = _create_campaign(form, request.user)
        except CampaignRefused as refusal:
            form.add_error(refusal.field if refusal.field in form.fields else None, refusal.message)
        except ValueError as error:  # build_hits: quiz bank too small, no choices to offer ...
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Campaign created with {len(hits)} HITs.")
            return redirect("labeling:campaign_detail", pk=campaign.pk)
    return render(request, "labeling/researcher/campaign_form.html", {"form": form})


def _create_campaign(form: CampaignForm, user) -> tuple[Campaign, list[HIT]]:
    from labeling.hits import build_hits

    data = form.cleaned_data
    with transaction.atomic():
        campaign = create_campaign(data["name"], labels=data["labels"], created_by=user, **form.campaign_settings())
        hits = build_hits(campaign, list(form.selected_dialogues(campaign.language)))
    return campaign, hits


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_create_pairwise(request: HttpRequest) -> HttpResponse:
    """A pairwise (ACUTE-Eval) campaign and its HITs, from two sources or a CSV of pairs."""
    form = PairwiseCampaignForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign, hits = create_pairwise_campaign(
                form.cleaned_data["name"], created_by=request.user, **form.campaign_arguments()
            )
        except CampaignRefused as refusal:
            form.add_error(refusal.field if refusal.field in form.fields else None, refusal.message)
        else:
            messages.success(request, f"Pairwise campaign created with {len(hits)} HITs.")
            return redirect("labeling:campaign_detail", pk=campaign.pk)
    return render(request, "labeling/researcher/pairwise_form.html", {"form": form})


@staff_required
@require_GET
def campaign_results(request: HttpRequest, pk: int) -> HttpResponse:
    """The task type's results page (pairwise: win rates per question, agreement, position bias)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    task_type = task_types.of(campaign)
    if not task_type.results_template:
        raise Http404("this campaign's results are on its dashboard")
    context = {"campaign": campaign, "task_type": task_type, **task_type.results(campaign)}
    return render(request, task_type.results_template, context)


@staff_required
@require_GET
def campaign_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The task type's export: csv or jsonl."""
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        export = task_types.of(campaign).export(campaign, fmt)
    except ValueError as error:
        raise Http404(str(error)) from error
    response = HttpResponse(export.text, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response


@staff_required
@require_GET
def campaign_detail(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    links = platform_links(_site_url(request), campaign)
    context = {
        "campaign": campaign,
        "links": links,
        "quiz_pool": quiz_pool.pool_status(),
        "task_type": task_types.of(campaign),
        "money": {
            "reward": money(campaign.reward, campaign.currency),
            "bonus": money(campaign.bonus, campaign.currency),
        },
        "platforms": campaign_platforms(campaign),
        "unpublished": not campaign.publications.exists(),
        "bought": answers_bought(campaign),
    }
    return render(request, "labeling/researcher/campaign_detail.html", context)


def _site_url(request: HttpRequest) -> str:
    """The public address platform links point at: SITE_URL, else this request's."""
    return settings.SITE_URL or request.build_absolute_uri("/")


# --- Crowd platforms: publish (cost preview first), sync, review, close -------------------------


@staff_required
@require_http_methods(["GET", "POST"])
def campaign_publish(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the cost preview for publishing on ?platform=; POST: queue the publish job."""
    campaign = get_object_or_404(Campaign, pk=pk)
    name = (request.POST if request.method == "POST" else request.GET).get("platform", "")
    if name not in ("mturk", "prolific"):
        return HttpResponseBadRequest("platform: choose mturk or prolific")
    preview = get_platform(name).cost_preview(campaign, _site_url(request))
    if request.method == "POST" and not preview.refusals:
        job = start_job(
            "labeling.platform_publish",
            {"campaign_id": campaign.pk, "platform": name, "base_url": _site_url(request)},
            user=request.user,
        )
        messages.success(request, f"Publishing on {name} queued as job {job.pk}; the page shows it once done.")
        return redirect("labeling:campaign_detail", pk=campaign.pk)
    other = campaign.publications.exclude(platform=name).first()
    context = {"campaign": campaign, "platform": name, "preview": preview, "other": other}
    # a POST the checks refuse (below the minimum pay, no https): the preview again, with why
    status = 400 if request.method == "POST" else 200
    return render(request, "labeling/researcher/publish.html", context, status=status)


@staff_required
@require_POST
def campaign_sync(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    job = start_job("labeling.platform_sync", {"campaign_id": campaign.pk}, user=request.user)
    messages.success(request, f"Sync queued as job {job.pk}.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def platform_submission_decide(request: HttpRequest, pk: int, submission_id: int) -> HttpResponse:
    """Approve or reject flagged or unmatched platform work; the sync queued now carries it out."""
    submission = get_object_or_404(PlatformSubmission, pk=submission_id, publication__campaign_id=pk)
    try:
        request_decision(submission, request.POST.get("action", ""))
    except ValueError as refusal:
        messages.error(request, f"Not changed: {refusal}.")
    else:
        job = start_job("labeling.platform_sync", {"campaign_id": pk}, user=request.user)
        messages.success(request, f"{submission.external_id}: sync job {job.pk} carries out the decision.")
    return redirect("labeling:campaign_detail", pk=pk)


@staff_required
@require_POST
def campaign_unsure_payment(request: HttpRequest, pk: int) -> HttpResponse:
    """After checking the platform: a bonus payment went out (paid) or not (pay it again)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    outcome = request.POST.get("outcome", "")
    if outcome not in ("paid", "unpaid"):
        return HttpResponseBadRequest("outcome: paid or unpaid")
    changed = resolve_unsure_payment(campaign, request.POST.get("reference", ""), paid=outcome == "paid")
    messages.success(request, f"{changed} ledger entries marked {outcome}.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def campaign_platform_close(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    job = start_job("labeling.platform_close", {"campaign_id": campaign.pk}, user=request.user)
    messages.success(request, f"Closing on the platform queued as job {job.pk}.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_GET
def campaign_report_partial(request: HttpRequest, pk: int) -> HttpResponse:
    """The dashboard's figures, loaded by htmx once the page is up (they take a moment on big campaigns)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    report = campaign_report(campaign)
    context = {"campaign": campaign, "report": report, "plots": report_plots(report)}
    return render(request, "labeling/researcher/partials/report.html", context)


@staff_required
@require_POST
def campaign_aggregate(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    job = start_job("labeling.aggregate_campaign", {"campaign_id": campaign.pk}, user=request.user)
    messages.success(request, f"Aggregation queued as job {job.pk}.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def campaign_status(request: HttpRequest, pk: int) -> HttpResponse:
    """Open, pause or close a campaign (annotators can claim HITs only while it is open)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    status = request.POST.get("status", "")
    if status == Campaign.CLOSED and campaign.status != Campaign.CLOSED and not confirmed(request):
        return _confirm(
            request,
            campaign,
            f"Close {campaign.name}?",
            "A closed campaign never opens again: annotators can take no more of its HITs, and HITs in progress "
            "can still be submitted until their time limit. Aggregating, approving and paying stay possible.",
            "Close the campaign",
        )
    try:
        set_campaign_status(campaign, status)
    except StatusChangeRefused as refusal:
        messages.error(request, f"Status not changed: {refusal}.")
    else:
        messages.success(request, f"{campaign.name} is now {campaign.get_status_display().lower()}.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def campaign_approve_submitted(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    if not confirmed(request):
        return _confirm(
            request,
            campaign,
            f"Approve the submitted HITs of {campaign.name}?",
            "Approved work is owed its reward (and bonus), and no page turns it back into submitted work. "
            "Blocked workers' submissions and platform work awaiting confirmation are left for review.",
            "Approve submitted HITs",
        )
    approved = approve_submitted(campaign)
    messages.success(request, f"{approved} submitted HITs approved (blocked workers' work left for review).")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def campaign_record_payments(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    if not confirmed(request):
        return _confirm(
            request,
            campaign,
            f"Record the payments of {campaign.name}?",
            "Every approved HIT not yet in the ledger gets its reward and bonus entries, due until marked paid; "
            "no page removes them.",
            "Record payments",
        )
    counts = record_payments(campaign)
    messages.success(request, f"{counts['new_entries']} new ledger entries for {counts['approved']} approved HITs.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def campaign_rotate_token(request: HttpRequest, pk: int) -> HttpResponse:
    """A new entry token: every platform link handed out before answers 403 from now on."""
    campaign = get_object_or_404(Campaign, pk=pk)
    if not confirmed(request):
        return _confirm(
            request,
            campaign,
            f"Rotate the entry token of {campaign.name}?",
            "Every platform link handed out before stops working (403) at once; the new links must be put on "
            "the platform.",
            "Rotate the entry token",
        )
    rotate_entry_token(campaign)
    messages.success(request, "New entry token: links handed out before no longer work. Update them on the platform.")
    return redirect("labeling:campaign_detail", pk=campaign.pk)


@staff_required
@require_POST
def worker_block(request: HttpRequest, pk: int) -> HttpResponse:
    """Block (or, with action=unblock, unblock) a worker; a blocked worker can claim no more HITs."""
    worker = get_object_or_404(Worker, pk=pk)
    status = Worker.ACTIVE if request.POST.get("action") == "unblock" else Worker.BLOCKED
    Worker.objects.filter(pk=worker.pk).update(status=status)
    messages.success(request, f"Worker {worker.external_id} is now {status}.")
    return _back(request)


@staff_required
@require_POST
def label_accept(request: HttpRequest) -> HttpResponse:
    """Accept a label typed through "Other" into the taxonomy, as kind "proposed"."""
    if not confirmed(request):
        text = " ".join(request.POST.get("text", "").split())
        return confirmation_page(
            request,
            title=f"Accept “{text[:80]}” as a label?",
            consequence="It joins the taxonomy (kind “proposed”) for every campaign; labels are not removed "
            "from these pages.",
            action="Accept as label",
            cancel_url=_back_url(request),
        )
    try:
        label = accept_proposed_label(request.POST.get("text", ""))
    except ValueError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{label.name} is a label ({label.get_kind_display()}). Aggregate again to use it.")
    return _back(request)


@staff_required
@require_GET
def campaign_labels_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """The aggregated labels as CSV: one row per turn."""
    campaign = get_object_or_404(Campaign, pk=pk)
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-labels.csv"'
    writer = csv.writer(response)
    writer.writerow(["dialogue", "turn", "status", "label", "answers", "agreement", "dawid_skene_label"])
    rows = (
        AggregatedLabel.objects.filter(campaign=campaign)
        .order_by("dialogue_id")
        .values_list("dialogue_id", "turn_id", "status", "label_text", "answer_count", "agreement", "dawid_skene_label")
    )
    for row in rows.iterator():
        writer.writerow([escape_cell(value) for value in row])  # no formulas in a spreadsheet
    return response


def _back(request: HttpRequest) -> HttpResponse:
    return redirect(_back_url(request))


def _back_url(request: HttpRequest) -> str:
    """The page the form was on, never another site."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return reverse("labeling:campaign_list")


def _confirm(request: HttpRequest, campaign: Campaign, title: str, consequence: str, action: str) -> HttpResponse:
    cancel = reverse("labeling:campaign_detail", args=[campaign.pk])
    return confirmation_page(request, title=title, consequence=consequence, action=action, cancel_url=cancel)
