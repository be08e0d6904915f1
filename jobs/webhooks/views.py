"""The researcher's webhook pages (staff only): register an endpoint (its secret shown once),
switch it off or delete it, and follow the deliveries with their attempts, replaying one by hand.
No delivery runs here: a replay only queues one more attempt for a worker."""

from django.contrib import messages
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from config.web.access import staff_required
from config.web.pages import confirmation_page, confirmed
from jobs.webhooks import delivery as deliveries
from jobs.webhooks.endpoints import EndpointRefused, change_endpoint, create_endpoint, delete_endpoint
from jobs.webhooks.models import EVENT_KINDS, WebhookAttempt, WebhookDelivery, WebhookEndpoint

PAGE_ROWS = 100


def _list_page(request: HttpRequest, *, status: int = 200, error: EndpointRefused | None = None) -> HttpResponse:
    context = {
        "endpoints": WebhookEndpoint.objects.all(),
        "kinds": EVENT_KINDS,
        "error": error,
        "posted": request.POST if error else None,
    }
    return render(request, "jobs/webhooks/endpoint_list.html", context, status=status)


@staff_required
def endpoint_list(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _list_page(request)
    try:
        endpoint, secret = create_endpoint(
            request.POST.get("url", ""),
            request.POST.getlist("kinds"),
            description=request.POST.get("description", ""),
            created_by=request.user,
        )
    except EndpointRefused as error:
        return _list_page(request, status=400, error=error)
    # shown on this answer only: not stored, not put in the session, not in a redirect
    response = render(
        request, "jobs/webhooks/endpoint_created.html", {"endpoint": endpoint, "secret": secret}, status=201
    )
    response["Cache-Control"] = "no-store"
    return response


def _with_attempts(queryset):
    return queryset.select_related("event", "endpoint").prefetch_related(
        Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number"))
    )


@staff_required
def endpoint_detail(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    rows = _with_attempts(endpoint.deliveries.all())[:PAGE_ROWS]
    return render(
        request, "jobs/webhooks/endpoint_detail.html", {"endpoint": endpoint, "deliveries": rows, "kinds": EVENT_KINDS}
    )


@staff_required
@require_POST
def endpoint_switch(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    change_endpoint(endpoint, active=not endpoint.active)
    messages.success(request, f"Webhook #{endpoint.pk} is {'on' if endpoint.active else 'off'}.")
    return redirect("webhooks:endpoint_detail", endpoint_id=endpoint.pk)


@staff_required
@require_POST
def endpoint_delete(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    if not confirmed(request):
        return confirmation_page(
            request,
            title=f"Delete webhook #{endpoint.pk}?",
            consequence="It receives no more events, and its deliveries and their attempts are deleted with it.",
            action="Delete the webhook",
            cancel_url=reverse("webhooks:endpoint_detail", args=[endpoint.pk]),
        )
    delete_endpoint(endpoint)
    messages.success(request, f"Deleted webhook #{endpoint_id}.")
    return redirect("webhooks:endpoint_list")


@staff_required
def delivery_list(request: HttpRequest) -> HttpResponse:
    rows = _with_attempts(WebhookDelivery.objects.all())[:PAGE_ROWS]
    return render(request, "jobs/webhooks/delivery_list.html", {"deliveries": rows})


@staff_required
@require_POST
def delivery_replay(request: HttpRequest, delivery_id: int) -> HttpResponse:
    row = get_object_or_404(WebhookDelivery, pk=delivery_id)
    if deliveries.replay(row):
        messages.success(request, f"Delivery #{row.pk} is queued for one more attempt.")
    else:
        messages.error(request, f"Delivery #{row.pk} is still {row.status}: its own retries are not over.")
    return redirect("webhooks:delivery_list")
