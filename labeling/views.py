from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@staff_member_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "labeling/placeholder.html", {"title": "Campaigns"})


@login_required
def worker_home(request: HttpRequest) -> HttpResponse:
    return render(request, "labeling/placeholder.html", {"title": "Annotate"})
