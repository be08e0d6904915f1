"""Step 2, the crowd's candidates (Django side): job `rank_candidates`.

Reads the suggestion model's Predictions (prefilter: calibrated confidence >= 0.9 on a dialogue's
last turn), the corpus's turns (the readability vocabulary), the HITs and the quiz pool (dialogues
already taken); ranks the candidates by readability (`annotation.readability`), the best N per
label interleaved by rank, and with a campaign (an id, or a new name: `create_campaign`) writes its
HITs through `labeling.work.hits.build_hits`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db import transaction
from django.db.models import Exists, F, OuterRef, Subquery

from annotation.models import Dialogue, ModelVersion, Prediction, Turn, TurnLabel
from annotation.papers import CANDIDATES_PER_LABEL, PREFILTER_CONFIDENCE
from annotation.readability import Candidate, RankedCandidate, build_vocabulary
from annotation.readability import rank_candidates as rank_by_readability
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.naming import stamped, unique_name

DEFAULT_CAMPAIGN_NAME = "Weak-labeled candidates"


def _suggestion_version(model_version_id: int | None) -> ModelVersion:
    """The given version, else the one that makes suggestions now (ModelVersion.objects.suggester)."""
    if model_version_id is not None:
        version = ModelVersion.objects.filter(pk=model_version_id).first()
        if version is None:
            raise JobCannotRun(f"model version {model_version_id} does not exist")
        return version
    version = ModelVersion.objects.suggester()
    if version is None:
        raise JobCannotRun("no suggestion model yet: run weak_train first")
    return version


def ranked_candidate_dialogues(
    version: ModelVersion,
    *,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
    language: str = "en",
) -> tuple[list[int], dict[str, int]]:
    """Dialogue ids for the crowd, ordered, and how many per label (see ranked_candidates)."""
    ranked = ranked_candidates(version, min_confidence=min_confidence, per_label=per_label, language=language)
    return [r.candidate.dialogue_id for r in ranked], dict(Counter(r.candidate.label for r in ranked))


def ranked_candidates(
    version: ModelVersion,
    *,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
    language: str = "en",
) -> list[RankedCandidate]:
    """The crowd's candidates, ordered, each with its label and rank within the label.

    Only dialogues the language identifier gave `language` (the campaign's) are candidates.

    A candidate is a turn the weak labeler labels with confidence >= min_confidence. The crowd
    labels the LAST turn of a dialogue (build_hits freezes the choices for that turn), so a
    candidate is the last turn of its dialogue: the dialogue ending at that turn is what the
    annotator reads. A confident turn in the middle of a dialogue is not a candidate; making it one
    would need a truncated copy of the dialogue, which would count its turns twice in the corpus,
    the exports and the statistics. Dialogues already in a HIT, with a crowd label or in the quiz
    pool (a quiz dialogue is never also work) are skipped.
    The order interleaves the labels by rank (every label's best, then every label's second...),
    so each HIT gets a mix of labels.
    """
    last_position = Turn.objects.filter(dialogue=OuterRef("turn__dialogue")).order_by("-position").values("position")
    rows = (
        Prediction.objects.filter(
            model_version=version,
            confidence__gte=min_confidence,
            turn__dialogue__in=Dialogue.objects.in_language(language).values("pk"),
        )
        .annotate(last_position=Subquery(last_position[:1]))
        .filter(turn__position=F("last_position"))
        .exclude(Exists(TurnLabel.objects.filter(turn=OuterRef("turn"), source=TurnLabel.CROWD)))
        .exclude(turn__dialogue__in=_dialogues_in_hits())
        .exclude(turn__dialogue__in=_quiz_dialogues())
        .values_list("turn_id", "turn__dialogue_id", "turn__text", "label__name", "confidence")
    )
    candidates = [Candidate(t, d, text, label, conf) for t, d, text, label, conf in rows.iterator(chunk_size=5000)]
    vocabulary = build_vocabulary(Turn.objects.values_list("text", flat=True).iterator(chunk_size=5000))
    ranked = rank_by_readability(candidates, vocabulary, min_confidence=min_confidence, per_label=per_label)
    ranked.sort(
        key=lambda r: (r.rank, LABEL_NAMES.index(r.candidate.label) if r.candidate.label in LABEL_NAMES else 99)
    )
    return ranked


def _dialogues_in_hits():
    from labeling.models import HITItem

    return HITItem.objects.filter(dialogue__isnull=False).values("dialogue_id")


def _quiz_dialogues():
    from labeling.models import QuizQuestion

    return QuizQuestion.objects.filter(dialogue__isnull=False).values("dialogue_id")


def rank_candidates(
    job: JobRun,
    model_version_id: int | None = None,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
    campaign_id: int | None = None,
    campaign_name: str | None = None,
    seed: int | None = 13,
    language: str = "en",
) -> dict[str, Any]:
    """Rank the candidates in `language` (an existing campaign's own language wins) by the
    suggestion model's calibrated confidence (the given version, else the one suggesting now);
    with a campaign (id or a new name) build its HITs from them."""
    from labeling.models import Campaign
    from labeling.work.hits import build_hits

    version = _suggestion_version(model_version_id)
    if campaign_id:
        language = Campaign.objects.values_list("language", flat=True).get(pk=campaign_id)
    report_progress(job, 0, 2, "ranking candidates by readability")
    dialogue_ids, per_label_counts = ranked_candidate_dialogues(
        version, min_confidence=float(min_confidence), per_label=int(per_label), language=language
    )
    result: dict[str, Any] = {
        "language": language,
        "model_version": version.pk,
        "candidates": len(dialogue_ids),
        "per_label": per_label_counts,
    }
    if (campaign_id or campaign_name) and not dialogue_ids:
        # an empty campaign would only be clutter: say why there is none instead
        note = NO_CANDIDATES + (
            f": no HITs added to campaign {campaign_id}" if campaign_id else ": no campaign created"
        )
        result.update(campaign=campaign_id, hits=0, note=note)
    elif campaign_id or campaign_name:
        with transaction.atomic():
            campaign = (
                Campaign.objects.get(pk=campaign_id) if campaign_id else _new_campaign(campaign_name, job, language)
            )
            order = {pk: i for i, pk in enumerate(dialogue_ids)}
            dialogues = sorted(Dialogue.objects.filter(pk__in=dialogue_ids), key=lambda d: order[d.pk])
            hits = build_hits(campaign, dialogues, seed=seed, suggester=version) if dialogues else []
        result.update(campaign=campaign.pk, campaign_name=campaign.name, hits=len(hits))
    result["dialogue_ids"] = dialogue_ids
    report_progress(job, 2, 2, _ranking_message(result))
    return result


NO_CANDIDATES = "no candidates (no last turn at or above the prefilter outside a HIT)"


def _ranking_message(result: dict[str, Any]) -> str:
    if result.get("note"):
        return result["note"]
    if result.get("campaign_name"):
        return f"{result['candidates']} candidates, {result['hits']} HITs in {result['campaign_name']!r}"
    return f"{result['candidates']} candidates"


def _new_campaign(name: str, job: JobRun, language: str = "en"):
    from labeling.models import Campaign
    from labeling.services.campaigns import create_campaign

    # a name already taken (a re-run) carries the time, then " #2", ... if that is taken too
    taken = lambda candidate: Campaign.objects.filter(name=candidate).exists()  # noqa: E731
    name = name.strip()
    return create_campaign(
        unique_name(stamped(name) if taken(name) else name, taken),
        language=language,
        description="Candidates ranked by the weak labeler and readability.",
        created_by=job.created_by,
    )
