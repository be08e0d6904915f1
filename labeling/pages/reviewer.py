"""The reviewer's pages: a campaign's adjudication queue, one item with its evidence, and the two
decisions (settle with a reason, send back for more answers); the audit log per campaign, worker
and item; a campaign's editable settings; refusing a proposed label.

Reviewers are staff or holders of `labeling.adjudicate` (labeling.services.adjudication.may_review); the
audit pages of a campaign or a worker, the settings and the proposals are staff only. htmx asks
for the item as a partial (templates/labeling/partials/adjudication_item.html) and swaps the
answer of a decision in place; without htmx the same URLs answer whole pages. Views call the
services (labeling.services.adjudication, labeling.services.campaigns, labeling.reports.campaign) and write no rows.
"""

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.models import AuditEntry, Turn
from config.web.access import gate, staff_required
from labeling.models import AggregatedLabel, Campaign, Worker
from labeling.reports.campaign import refuse_proposed_label
from labeling.services import adjudication
from labeling.services.campaigns import EDITABLE_SETTINGS, CampaignRefused, change_campaign_settings

LOG_PAGE = 100


reviewer_required = gate(adjudication.may_review, "reviewers only")
staff_only = staff_required


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true" and "HX-History-Restore-Request" not in request.headers


# --- the queue and one item ---------------------------------------------------------------------


@reviewer_required
@require_GET
def queue_page(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    rows = adjudication.queue(campaign)
    page = Paginator(rows, LOG_PAGE).get_page(request.GET.get("page"))
    settled = AggregatedLabel.objects.filter(campaign=campaign, status=AggregatedLabel.ADJUDICATED).count()
    context = {
        "campaign": campaign,
        "page": page,
        "threshold": adjudication.posterior_threshold(campaign),
        "settled": settled,
    }
    return render(request, "labeling/adjudication_queue.html", context)


def _item(pk: int, item_id: int) -> AggregatedLabel:
    return get_object_or_404(AggregatedLabel.objects.select_related("campaign", "turn"), pk=item_id, campaign_id=pk)


def _item_context(row: AggregatedLabel, **extra) -> dict:
    turns = Turn.objects.filter(dialogue_id=row.dialogue_id).order_by("position")
    return {
        "row": row,
        "campaign": row.campaign,
        "turns": turns,
        "evidence": adjudication.item_evidence(row),
        "log": AuditEntry.objects.for_turn(row.turn_id)[:50],
        **extra,
    }


def _render_item(request: HttpRequest, row: AggregatedLabel, status: int = 200, **extra) -> HttpResponse:
    template = "labeling/partials/adjudication_item.html" if _is_htmx(request) else "labeling/adjudication_item.html"
    return render(request, template, _item_context(row, **extra), status=status)


@reviewer_required
@require_GET
def item_page(request: HttpRequest, pk: int, item_id: int) -> HttpResponse:
    return _render_item(request, _item(pk, item_id))


@reviewer_required
@require_POST
def settle_item(request: HttpRequest, pk: int, item_id: int) -> HttpResponse:
    row = _item(pk, item_id)
    try:
        adjudication.settle(row, request.POST.get("label", ""), request.user, request.POST.get("reason", ""))
    except adjudication.AdjudicationRefused as refused:
        return _render_item(request, row, status=400, error=refused, posted=request.POST)
    return _decided(request, row, f"Settled as {row.label_text}.")


@reviewer_required
@require_POST
def send_back_item(request: HttpRequest, pk: int, item_id: int) -> HttpResponse:
    row = _item(pk, item_id)
    try:
        opened = adjudication.send_back(row, request.user, request.POST.get("reason", ""))
    except adjudication.AdjudicationRefused as refused:
        return _render_item(request, row, status=400, error=refused, posted=request.POST)
    hits = f"{opened} follow-up HIT opened" if opened else "its HIT still waits for answers"
    return _decided(request, row, f"Sent back for one more answer ({hits}).")


def _decided(request: HttpRequest, row: AggregatedLabel, message: str) -> HttpResponse:
    if _is_htmx(request):
        row.refresh_from_db()
        return _render_item(request, row, done=message)
    messages.success(request, message)
    return redirect("labeling:adjudication_queue", pk=row.campaign_id)


# --- the audit log ------------------------------------------------------------------------------


def _log_page(request: HttpRequest, title: str, entries, back_url: str = "") -> HttpResponse:
    kind = request.GET.get("kind", "")
    if kind:
        entries = entries.filter(kind=kind)
    page = Paginator(entries, LOG_PAGE).get_page(request.GET.get("page"))
    context = {"title": title, "page": page, "kind": kind, "back_url": back_url}
    template = "labeling/partials/audit_log.html" if _is_htmx(request) else "labeling/audit_log_page.html"
    return render(request, template, context)


@staff_only
@require_GET
def campaign_log(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    return _log_page(request, f"Audit log of {campaign.name}", AuditEntry.objects.for_campaign(campaign.pk))


@staff_only
@require_GET
def worker_log(request: HttpRequest, pk: int) -> HttpResponse:
    worker = get_object_or_404(Worker, pk=pk)
    return _log_page(request, f"Audit log of worker {worker.external_id}", AuditEntry.objects.for_worker(worker.pk))


@reviewer_required
@require_GET
def turn_log(request: HttpRequest, turn_id: int) -> HttpResponse:
    turn = get_object_or_404(Turn, pk=turn_id)
    return _log_page(request, f"Audit log of turn {turn.pk}", AuditEntry.objects.for_turn(turn.pk))


# --- campaign settings and proposals ------------------------------------------------------------


@staff_only
@require_http_methods(["GET", "POST"])
def campaign_settings(request: HttpRequest, pk: int) -> HttpResponse:
    """Change the editable settings with a reason; each change goes into the audit log."""
    campaign = get_object_or_404(Campaign, pk=pk)
    error = None
    if request.method == "POST":
        try:
            changed = change_campaign_settings(campaign, _posted_settings(request), request.POST.get("reason", ""))
        except CampaignRefused as refused:
            error = refused
        else:
            messages.success(request, f"Changed: {', '.join(changed) or 'nothing'}.")
            return redirect("labeling:campaign_settings", pk=campaign.pk)
    flow = request.POST.get("study_flow") if error else json.dumps(campaign.study_flow, indent=2, ensure_ascii=False)
    context = {"campaign": campaign, "error": error, "editable": EDITABLE_SETTINGS, "study_flow": flow}
    return render(request, "labeling/campaign_settings.html", context, status=400 if error else 200)


def _posted_settings(request: HttpRequest) -> dict:
    changes = {name: request.POST[name].strip() for name in EDITABLE_SETTINGS if name in request.POST}
    if "adjudicate_posterior_below" in changes:
        changes["adjudicate_posterior_below"] = _number("adjudicate_posterior_below", changes)
    if "study_flow" in changes:
        changes["study_flow"] = _json("study_flow", changes)
    return changes


def _json(name: str, changes: dict):
    raw = changes[name]
    if raw == "":
        return {}
    try:
        return json.loads(raw)
    except ValueError as error:
        raise CampaignRefused(name, f"is not valid JSON ({error})") from error


def _number(name: str, changes: dict) -> float | None:
    raw = changes[name]
    if raw == "":
        return None
    try:
        return float(raw)
    except ValueError as error:
        raise CampaignRefused(name, f"{raw!r} is not a number") from error


@staff_only
@require_POST
def refuse_label(request: HttpRequest) -> HttpResponse:
    """Refuse a label typed through "Other" (a reason is required); it leaves the proposals."""
    back = request.POST.get("next") or "/"
    try:
        name = refuse_proposed_label(request.POST.get("text", ""), request.POST.get("reason", ""))
    except ValueError as error:
        return render(request, "labeling/refusal.html", {"error": error, "back": back}, status=400)
    messages.success(request, f"“{name}” refused; it leaves the proposals.")
    return redirect(back if back.startswith("/") and not back.startswith("//") else "/")
