from django.core.paginator import Paginator
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Dialogue, Movie, SkillContext, SubtitleFile, Turn, TurnSkill
from config.web.access import staff_required

SOURCE_NAMES = dict(Dialogue.SOURCE_CHOICES)


@staff_required
def corpus(request: HttpRequest) -> HttpResponse:
    files = SubtitleFile.objects.select_related("movie").order_by("-ingested_at")[:200]
    context = {
        "movie_count": Movie.objects.count(),
        "file_count": SubtitleFile.objects.count(),
        "dialogue_count": Dialogue.objects.count(),
        "turn_count": Turn.objects.count(),
        "languages": Dialogue.objects.language_counts(),
        "sources": [(source, SOURCE_NAMES.get(source, source), n) for source, n in Dialogue.objects.source_counts()],
        "files": files,
    }
    return render(request, "annotation/corpus.html", context)


@staff_required
def subtitle_file(request: HttpRequest, pk: int) -> HttpResponse:
    file = get_object_or_404(SubtitleFile.objects.select_related("movie"), pk=pk)
    dialogues = Dialogue.objects.filter(file=file).prefetch_related("turns").order_by("position")[:100]
    return render(request, "annotation/subtitle_file.html", {"file": file, "dialogues": dialogues})


@staff_required
def dialogues(request: HttpRequest) -> HttpResponse:
    """Dialogues of one source (?source=botstalk; empty: subtitles), newest first, 50 a page."""
    source = request.GET.get("source", "")
    if source not in SOURCE_NAMES:
        raise Http404("unknown dialogue source")
    first_turn = Turn.objects.filter(dialogue=OuterRef("pk"), position=0).values("text")[:1]
    chosen = Dialogue.objects.from_source(source).select_related("movie").order_by("-pk")
    chosen = chosen.annotate(first_turn=Subquery(first_turn))
    page = Paginator(chosen, 50).get_page(request.GET.get("page"))
    context = {"page": page, "source": source, "source_name": SOURCE_NAMES[source]}
    return render(request, "annotation/dialogues.html", context)


@staff_required
def dialogue(request: HttpRequest, pk: int) -> HttpResponse:
    """One dialogue: its turns with every skill label (the BotsTalk agent and whether it took the
    mic; each skill classifier's distribution) and, for a machine-made one, its skill contexts."""
    shown = get_object_or_404(Dialogue.objects.select_related("movie", "file"), pk=pk)
    turns = list(shown.turns.order_by("position"))
    skills: dict[int, list[TurnSkill]] = {turn.pk: [] for turn in turns}
    for row in (
        TurnSkill.objects.filter(turn__in=turns).select_related("model_version").order_by("source", "model_version")
    ):
        skills[row.turn_id].append(row)
    context = {
        "dialogue": shown,
        "source_name": SOURCE_NAMES.get(shown.source, shown.source),
        "turns": [(turn, skills[turn.pk]) for turn in turns],
        "contexts": SkillContext.objects.filter(dialogue=shown),
    }
    return render(request, "annotation/dialogue.html", context)


@staff_required
def analysis(request: HttpRequest) -> HttpResponse:
    # Replaced by the analysis pages (statistics, distributions, flows, export).
    return render(request, "annotation/analysis.html", {})
