"""The researcher's pages (staff only): campaigns, their creation, and a dashboard per campaign.

Views are thin: every state change is one named function (build_hits, aggregate via a job,
accept_proposed_label, record_payments, labeling.services.workers.set_blocked) that the API and commands
call too. Every button that changes state goes through confirm_then_act (on one campaign:
the campaign_action decorator): an action that cannot be undone asks first, then acts and goes
back with a message. The views write and lock no row themselves.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Sum
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.web.access import staff_required
from config.web.pages import confirmation_page, confirmed, refusal
from jobs.runtime import start_job
from labeling import task_types
from labeling.actions.release import release_unproven, unproven_holdings
from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, PlatformSubmission, Worker
from labeling.pages.forms import CampaignForm, PairwiseCampaignForm
from labeling.platforms import get_platform
from labeling.platforms.costs import money
from labeling.platforms.summary import campaign_platforms
from labeling.platforms.sync import request_decision
from labeling.reports import answer_export
from labeling.reports.cache import CSRF_PLACEHOLDER, shown_figures
from labeling.reports.campaign import accept_proposed_label, review_proposal
from labeling.services import liveness
from labeling.services.campaigns import (
    CampaignRefused,
    StatusChangeRefused,
    create_campaign,
    create_pairwise_campaign,
    set_campaign_status,
)
from labeling.services.entry_tokens import platform_links, rotate_entry_token
from labeling.services.payments import approve_submitted, record_payments, record_share_read, resolve_unsure_payment
from labeling.services.qualification import campaign_summary
from labeling.services.workers import set_blocked
from labeling.task_types import Export, export_records
from labeling.work import quiz_pool

# --- Confirm, then act: every button that changes state -----------------------------------------


@dataclass(frozen=True)
class Ask:
    """What the confirmation page (config.web.pages) says before an action that cannot be undone."""

    title: str
    consequence: str
    action: str  # the label of the button that does it


class ActionRefused(Exception):
    """The rules refuse the action: its message shows as an error and nothing changed."""


def confirm_then_act(
    request: HttpRequest,
    act: Callable[[], str | HttpResponse],
    *,
    done_url: str,
    ask: Ask | None = None,
    cancel_url: str = "",
) -> HttpResponse:
    """A researcher's button. With `ask`, a POST that is not confirmed gets the confirmation page,
    which posts the same fields again, confirmed (its cancel link: `cancel_url`, else `done_url`).
    Otherwise `act` runs and the researcher goes to `done_url` with its message: the text it
    returns as a success, an ActionRefused's as an error. An HttpResponse it returns (bad input)
    is the answer as it is."""
    if ask is not None and not confirmed(request):
        return confirmation_page(
            request, title=ask.title, consequence=ask.consequence, action=ask.action, cancel_url=cancel_url or done_url
        )
    try:
        outcome = act()
    except ActionRefused as refused:
        messages.error(request, str(refused))
    else:
        if isinstance(outcome, HttpResponse):
            return outcome
        messages.success(request, outcome)
    return redirect(done_url)


def campaign_action(ask: Callable[[HttpRequest, Campaign], Ask | None] | None = None) -> Callable:
    """The view of a staff-only POST on one campaign (URL argument `pk`; 404 when there is none)
    that ends on the campaign's page, through confirm_then_act. The decorated
    `act(request, campaign, **other_url_arguments)` does the action and returns its message;
    `ask(request, campaign)`, when given, says what to confirm first (None: nothing, this time)."""

    def decorate(act: Callable[..., str | HttpResponse]) -> Callable:
        @staff_required
        @require_POST
        @wraps(act)
        def view(request: HttpRequest, pk: int, **kwargs) -> HttpResponse:
            campaign = get_object_or_404(Campaign, pk=pk)
            return confirm_then_act(
                request,
                lambda: act(request, campaign, **kwargs),
                done_url=reverse("labeling:campaign_detail", args=[campaign.pk]),
                ask=ask(request, campaign) if ask is not None else None,
            )

        return view

    return decorate


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
    from labeling.work.hits import build_hits

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
    return _download(export)


@staff_required
@require_GET
def campaign_answers_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Every counted answer with its interface language (labeling.reports.answer_export): csv or jsonl."""
    campaign = get_object_or_404(Campaign, pk=pk)
    try:
        export = answer_export.export_answers(campaign, fmt)
    except ValueError as error:
        raise Http404(str(error)) from error
    return _download(export)


def _download(export: Export) -> StreamingHttpResponse:
    """The export streamed as it is read from the database (never the whole file in memory)."""
    response = StreamingHttpResponse(export.chunks, content_type=export.content_type)
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
        # on the site until published: its annotators are the crowd; a platform's is counted on publishing
        "needs": liveness.campaign_needs(
            campaign, workers=liveness.site_annotators() if not campaign.publications.exists() else None
        ),
        "pool_per_ten_hits": liveness.pool_items_for_more(campaign, 10),
        "task_type": task_types.of(campaign),
        "money": {
            "reward": money(campaign.reward, campaign.currency),
            "bonus": money(campaign.bonus, campaign.currency),
        },
        "platforms": campaign_platforms(campaign),
        "unpublished": not campaign.publications.exists(),
        "bought": shown_figures(campaign, "bought"),  # counts every answer: stored by the refresh job
        "qualification": campaign_summary(campaign),
        "unproven": unproven_holdings(campaign),
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
    # a platform identity takes one HIT (one landing, one HIT): every open seat needs a place bought
    needs = liveness.campaign_needs(campaign, workers=preview.seats, hits_per_worker=1) if preview.seats else None
    if request.method == "POST" and not preview.refusals and (needs is None or needs.can_complete):
        job = start_job(
            "labeling.platform_publish",
            {"campaign_id": campaign.pk, "platform": name, "base_url": _site_url(request)},
            user=request.user,
        )
        messages.success(request, f"Publishing on {name} queued as job {job.pk}; the page shows it once done.")
        return redirect("labeling:campaign_detail", pk=campaign.pk)
    other = campaign.publications.exclude(platform=name).first()
    context = {"campaign": campaign, "platform": name, "preview": preview, "other": other, "needs": needs}
    # a POST the checks refuse (below the minimum pay, no https): the preview again, with why
    status = 400 if request.method == "POST" else 200
    return render(request, "labeling/researcher/publish.html", context, status=status)


@campaign_action()
def campaign_sync(request: HttpRequest, campaign: Campaign) -> str:
    job = start_job("labeling.platform_sync", {"campaign_id": campaign.pk}, user=request.user)
    return f"Sync queued as job {job.pk}."


@campaign_action()
def campaign_release_unproven(request: HttpRequest, campaign: Campaign) -> str:
    """Give back now the seats that unproven platform identities hold (labeling.actions.release)."""
    held = release_unproven(campaign)
    return (
        f"Released {held.seats} seats and {held.phantom_places} phantom places on {held.hits} HITs, "
        f"held by {held.identities} unproven identities ({held.submitted} submitted, unconfirmed)."
    )


@campaign_action()
def platform_submission_decide(request: HttpRequest, campaign: Campaign, submission_id: int) -> str:
    """Approve or reject flagged or unmatched platform work; the sync queued now carries it out."""
    submission = get_object_or_404(PlatformSubmission, pk=submission_id, publication__campaign=campaign)
    try:
        request_decision(submission, request.POST.get("action", ""))
    except ValueError as refusal:
        raise ActionRefused(f"Not changed: {refusal}.") from refusal
    job = start_job("labeling.platform_sync", {"campaign_id": campaign.pk}, user=request.user)
    return f"{submission.external_id}: sync job {job.pk} carries out the decision."


@campaign_action()
def campaign_unsure_payment(request: HttpRequest, campaign: Campaign) -> str | HttpResponse:
    """After checking the platform: a bonus payment went out (paid) or not (pay it again)."""
    outcome = request.POST.get("outcome", "")
    if outcome not in ("paid", "unpaid"):
        return HttpResponseBadRequest("outcome: paid or unpaid")
    changed = resolve_unsure_payment(campaign, request.POST.get("reference", ""), paid=outcome == "paid")
    return f"{changed} ledger entries marked {outcome}."


@campaign_action()
def campaign_partial_share(request: HttpRequest, campaign: Campaign) -> str | HttpResponse:
    """The share a researcher read on the platform for work approved in part there (never guessed)."""
    from labeling.platforms.sync import SHARE_UNKNOWN

    post = request.POST
    try:
        entry = record_share_read(campaign, post.get("assignment", ""), post.get("percent", ""), SHARE_UNKNOWN)
    except ValueError as refusal:
        return HttpResponseBadRequest(str(refusal))
    return f"A reward of {entry.amount} is owed for assignment {entry.assignment_id}; the next sync records it paid."


@campaign_action()
def campaign_platform_close(request: HttpRequest, campaign: Campaign) -> str:
    job = start_job("labeling.platform_close", {"campaign_id": campaign.pk}, user=request.user)
    return f"Closing on the platform queued as job {job.pk}."


@staff_required
@require_GET
def campaign_report_partial(request: HttpRequest, pk: int) -> HttpResponse:
    """The dashboard's figures, loaded by htmx once the page is up: as last computed, labelled with
    their time and polled again while newer ones are computed (labeling.reports.cache)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    shown = shown_figures(campaign, "html")
    context = {
        "campaign": campaign,
        "shown": shown,
        "report_html": shown.value.replace(CSRF_PLACEHOLDER, get_token(request)) if shown else "",
        "poll_seconds": settings.REPORT_POLL_SECONDS,
    }
    return render(request, "labeling/researcher/partials/report_shown.html", context)


@campaign_action()
def campaign_aggregate(request: HttpRequest, campaign: Campaign) -> str:
    job = start_job("labeling.aggregate_campaign", {"campaign_id": campaign.pk}, user=request.user)
    return f"Aggregation queued as job {job.pk}."


def _closing(request: HttpRequest, campaign: Campaign) -> Ask | None:
    """Only closing asks first: pausing is undone by opening again."""
    if request.POST.get("status", "") != Campaign.CLOSED or campaign.status == Campaign.CLOSED:
        return None
    return Ask(
        f"Close {campaign.name}?",
        "A closed campaign never opens again: annotators can take no more of its HITs, and HITs in progress "
        "can still be submitted until their time limit. Aggregating, approving and paying stay possible.",
        "Close the campaign",
    )


@campaign_action(ask=_closing)
def campaign_status(request: HttpRequest, campaign: Campaign) -> str:
    """Open, pause or close a campaign (annotators can claim HITs only while it is open)."""
    try:
        set_campaign_status(campaign, request.POST.get("status", ""))
    except StatusChangeRefused as refusal:
        raise ActionRefused(f"Status not changed: {refusal}.") from refusal
    return f"{campaign.name} is now {campaign.get_status_display().lower()}."


def _approving(request: HttpRequest, campaign: Campaign) -> Ask:
    return Ask(
        f"Approve the submitted HITs of {campaign.name}?",
        "Approved work is owed its reward (and bonus), and no page turns it back into submitted work. "
        "Blocked workers' submissions and platform work awaiting confirmation are left for review.",
        "Approve submitted HITs",
    )


@campaign_action(ask=_approving)
def campaign_approve_submitted(request: HttpRequest, campaign: Campaign) -> str:
    approved = approve_submitted(campaign)
    return f"{approved} submitted HITs approved (blocked workers' work left for review)."


def _paying(request: HttpRequest, campaign: Campaign) -> Ask:
    return Ask(
        f"Record the payments of {campaign.name}?",
        "Every approved HIT not yet in the ledger gets its reward and bonus entries, due until marked paid; "
        "no page removes them.",
        "Record payments",
    )


@campaign_action(ask=_paying)
def campaign_record_payments(request: HttpRequest, campaign: Campaign) -> str:
    counts = record_payments(campaign)
    return f"{counts['new_entries']} new ledger entries for {counts['approved']} approved HITs."


def _rotating(request: HttpRequest, campaign: Campaign) -> Ask:
    return Ask(
        f"Rotate the entry token of {campaign.name}?",
        "Every platform link handed out before stops working (403) at once; the new links must be put on the platform.",
        "Rotate the entry token",
    )


@campaign_action(ask=_rotating)
def campaign_rotate_token(request: HttpRequest, campaign: Campaign) -> str:
    """A new entry token: every platform link handed out before answers 403 from now on."""
    rotate_entry_token(campaign)
    return "New entry token: links handed out before no longer work. Update them on the platform."


@staff_required
@require_POST
def worker_block(request: HttpRequest, pk: int) -> HttpResponse:
    """Block (or, with action=unblock, unblock) a worker; a blocked worker can claim no more HITs."""
    worker = get_object_or_404(Worker, pk=pk)
    blocked = request.POST.get("action") != "unblock"
    return confirm_then_act(
        request,
        lambda: (
            f"Worker {worker.external_id} is now {set_blocked(worker, blocked, reason=request.POST.get('reason', ''))}."
        ),
        done_url=_back_url(request),
    )


@staff_required
@require_POST
def label_accept(request: HttpRequest) -> HttpResponse:
    """Accept a label typed through "Other" into the taxonomy, as kind "proposed". The page
    before it says what it would be; a text that cannot be a label (direction or invisible
    characters, too long) or that looks like an existing label gets a refusal page naming why
    and the label it resembles (reports.review_proposal), and nothing is created."""
    review = review_proposal(request.POST.get("text", ""))
    if review.refusal:
        title = f"Looks like “{review.looks_like.name}”" if review.looks_like else "Not a label"
        status = 409 if review.looks_like else 400
        return refusal(request, title, review.refusal, status=status, next_url=_back_url(request), next_label="Back")
    ask = Ask(
        f"Accept “{review.name[:80]}” as a label?",
        f"It is the label {review.existing.name} already: accepting it adds nothing."
        if review.existing
        else "It joins the taxonomy (kind “proposed”) for every campaign; labels are not removed from these pages.",
        "Accept as label",
    )
    return confirm_then_act(
        request, lambda: _accept_label(request.POST.get("text", "")), done_url=_back_url(request), ask=ask
    )


def _accept_label(text: str) -> str:
    try:
        label = accept_proposed_label(text)
    except ValueError as error:
        raise ActionRefused(str(error)) from error
    return f"{label.name} is a label ({label.get_kind_display()}). Aggregate again to use it."


@staff_required
@require_GET
def campaign_labels_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """The aggregated labels as CSV: one row per turn, streamed."""
    campaign = get_object_or_404(Campaign, pk=pk)
    fields = ["dialogue", "turn", "status", "label", "answers", "agreement", "dawid_skene_label"]
    rows = (
        AggregatedLabel.objects.filter(campaign=campaign)
        .order_by("dialogue_id")
        .values_list("dialogue_id", "turn_id", "status", "label_text", "answer_count", "agreement", "dawid_skene_label")
    )
    records = (dict(zip(fields, row, strict=True)) for row in rows.iterator(chunk_size=5000))
    return _download(export_records(campaign, "labels", records, fields, "csv"))  # cells escaped: no formulas


def _back_url(request: HttpRequest) -> str:
    """The page the form was on, never another site."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return reverse("labeling:campaign_list")
