from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Dialogue, Movie, SubtitleFile, Turn


@staff_member_required
def corpus(request: HttpRequest) -> HttpResponse:
    files = SubtitleFile.objects.select_related("movie").order_by("-ingested_at")[:200]
    context = {
        "movie_count": Movie.objects.count(),
        "file_count": SubtitleFile.objects.count(),
        "dialogue_count": Dialogue.objects.count(),
        "turn_count": Turn.objects.count(),
        "languages": Dialogue.objects.language_counts(),
        "files": files,
    }
    return render(request, "annotation/corpus.html", context)


@staff_member_required
def subtitle_file(request: HttpRequest, pk: int) -> HttpResponse:
    file = get_object_or_404(SubtitleFile.objects.select_related("movie"), pk=pk)
    dialogues = Dialogue.objects.filter(file=file).prefetch_related("turns").order_by("position")[:100]
    return render(request, "annotation/subtitle_file.html", {"file": file, "dialogues": dialogues})


@staff_member_required
def analysis(request: HttpRequest) -> HttpResponse:
    # Replaced by the analysis pages (statistics, distributions, flows, export).
    return render(request, "annotation/analysis.html", {})
