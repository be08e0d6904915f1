from django.contrib.staticfiles.storage import staticfiles_storage
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import redirect, render


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect("login")
    return render(request, "home.html")


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"ok": True})


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico on pages without a <link rel="icon"> (downloads, the API)."""
    return HttpResponsePermanentRedirect(staticfiles_storage.url("favicon.svg"))
