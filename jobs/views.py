"""The Jobs pages (staff only): start a job from its form, watch its progress, cancel or retry it.
Starting a job only records a JobRun and queues it for a worker; no job work runs here."""

from django.contrib import messages
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from config.web.access import staff_required
from config.web.pages import confirmation_page, confirmed
from jobs import registry
from jobs.forms import JobForm
from jobs.models import JobRun
from jobs.runtime import cancel_job, retry_job, start_job


def _job_list(request: HttpRequest, bound: JobForm | None = None, status: int = 200, error: str = "") -> HttpResponse:
    forms = [bound if bound and bound.spec.kind == spec.kind else JobForm(spec) for spec in registry.startable()]
    context = {"jobs": JobRun.objects.filter(parent=None)[:100], "forms": forms, "open_kind": bound.spec.kind if bound else None,
               "start_error": error}  # fmt: skip
    return render(request, "jobs/job_list.html", context, status=status)


@staff_required
def job_list(request: HttpRequest) -> HttpResponse:
    return _job_list(request)


@staff_required
@require_POST
def job_start(request: HttpRequest) -> HttpResponse:
    kind = request.POST.get("kind", "")
    spec = next((s for s in registry.startable() if s.kind == kind), None)
    if spec is None:
        return _job_list(request, status=400, error=f"{kind!r} is not a job you can start here")
    form = JobForm(spec, request.POST)
    parameters = form.parameters()
    if parameters is None:
        return _job_list(request, form, status=400, error=f"{kind}: check the highlighted fields")
    job = start_job(kind, parameters, user=request.user)
    messages.success(request, f"Queued {kind} as job #{job.pk}.")
    return redirect("jobs:job_detail", job_id=job.pk)


@staff_required
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(JobRun, pk=job_id)
    child_ids = job.result.get("jobs", []) if isinstance(job.result, dict) else []
    # the jobs a pipeline queued (its result lists them) and the shards of a sharded job
    children = JobRun.objects.filter(Q(pk__in=child_ids) | Q(parent=job)).order_by("pk")
    return render(request, "jobs/job_detail.html", {"job": job, "children": children})


@staff_required
def job_status(request: HttpRequest, job_id: int) -> HttpResponse:
    """The progress partial htmx polls every 2 s; once the job is finished it renders without the
    polling attribute, so polling stops."""
    job = get_object_or_404(JobRun, pk=job_id)
    return render(request, "jobs/partials/job_status.html", {"job": job})


@staff_required
@require_POST
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(JobRun, pk=job_id)
    if job.can_cancel and not confirmed(request):
        return confirmation_page(
            request,
            title=f"Cancel {job.kind} #{job.pk}?",
            consequence="A queued job never runs; a running one stops after its current chunk and keeps what it "
            "has written. A cancelled job can be retried from the start.",
            action="Cancel the job",
            cancel_url=reverse("jobs:job_detail", args=[job.pk]),
        )
    if cancel_job(job, by=request.user.get_username()):
        messages.success(request, f"Cancelled job #{job.pk}; a running job stops after its current chunk.")
    else:
        messages.error(request, f"Job #{job.pk} has already finished.")
    return redirect("jobs:job_detail", job_id=job.pk)


@staff_required
@require_POST
def job_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(JobRun, pk=job_id)
    if retry_job(job):
        messages.success(request, f"Queued job #{job.pk} again.")
    else:
        messages.error(request, f"Job #{job.pk} is {job.status}: only failed or cancelled jobs can be retried.")
    return redirect("jobs:job_detail", job_id=job.pk)
