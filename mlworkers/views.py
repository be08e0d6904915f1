from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mlworkers.models import JobRun


@staff_member_required
def job_list(request: HttpRequest) -> HttpResponse:
    return render(request, "mlworkers/job_list.html", {"jobs": JobRun.objects.all()[:100]})
