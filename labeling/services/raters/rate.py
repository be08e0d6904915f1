"""The one writer of RaterAnswer rows: a model labels a campaign's items as one more rater.

- `rate_with_endpoint`: a chat model behind an OpenAI-compatible endpoint (settings
  MODEL_RATER_*), prompted with the campaign's label set and few-shot examples from its gold
  (majority labels); the few-shot items are not rated, so no answer is copied from its prompt.
- `rate_with_model_version`: a model version of ours, through its stored predictions (made by the
  suggestions / bulk annotation jobs); a turn without one gets a `no-prediction` record.

Each item is its own row, saved as soon as it is answered (a re-run asks again only the items
without an `ok` answer). Run from a job (labeling.jobs: labeling.model_rater), never in a request.
"""

import random
from collections.abc import Callable

from django.conf import settings

from annotation.models import ModelVersion, Prediction, Turn
from config.scrub import scrub
from labeling.models import AggregatedLabel, Campaign, HITItem, RaterAnswer
from labeling.services.raters.endpoint import Endpoint, EndpointReply, chat
from labeling.services.raters.prompt import Example, build_messages, read_answer
from labeling.work.label_sets import campaign_labels

Progress = Callable[[int, int], None]


def campaign_turns(campaign: Campaign) -> list[int]:
    """The campaign's labeled turns (quiz screens left out), in a fixed order."""
    found = (
        HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True, target_turn__isnull=False)
        .values_list("target_turn_id", flat=True)
        .distinct()
    )
    return sorted(found)


def endpoint_from_settings() -> Endpoint:
    if not settings.MODEL_RATER_ENDPOINT_URL or not settings.MODEL_RATER_MODEL:
        raise ValueError("MODEL_RATER_ENDPOINT_URL and MODEL_RATER_MODEL must be set to rate with an endpoint")
    return Endpoint(
        url=settings.MODEL_RATER_ENDPOINT_URL,
        model=settings.MODEL_RATER_MODEL,
        key=settings.MODEL_RATER_API_KEY,
        timeout=settings.MODEL_RATER_TIMEOUT_SECONDS,
        max_retries=settings.MODEL_RATER_MAX_RETRIES,
    )


def _dialogue_turns(turn_ids: list[int]) -> dict[int, tuple[str, ...]]:
    """Each turn's dialogue up to and with the turn."""
    targets = Turn.objects.filter(pk__in=turn_ids).values_list("pk", "dialogue_id", "position")
    by_dialogue: dict[int, list[tuple[int, str]]] = {}
    for dialogue, position, text in Turn.objects.filter(dialogue_id__in={d for _, d, _ in targets}).values_list(
        "dialogue_id", "position", "text"
    ):
        by_dialogue.setdefault(dialogue, []).append((position, text))
    return {
        pk: tuple(text for p, text in sorted(by_dialogue[dialogue]) if p <= position)
        for pk, dialogue, position in targets
    }


def few_shot_examples(campaign: Campaign, count: int, seed: int = 0) -> list[tuple[int, Example]]:
    gold = list(
        AggregatedLabel.objects.filter(campaign=campaign, status=AggregatedLabel.MAJORITY, label__isnull=False)
        .order_by("turn_id")
        .values_list("turn_id", "label__name")
    )
    chosen = sorted(random.Random(seed).sample(gold, min(count, len(gold))))
    texts = _dialogue_turns([turn for turn, _ in chosen])
    return [(turn, Example(texts[turn], label)) for turn, label in chosen]


def rate_with_endpoint(campaign: Campaign, endpoint: Endpoint, *, progress: Progress | None = None, sleep=None) -> dict:
    labels = sorted(campaign_labels(campaign).values_list("name", flat=True))
    shots = few_shot_examples(campaign, settings.MODEL_RATER_FEW_SHOT)
    rater = f"endpoint:{endpoint.model}"
    skipped = {turn for turn, _ in shots}
    todo = _not_yet_rated(campaign, rater, [t for t in campaign_turns(campaign) if t not in skipped])
    texts = _dialogue_turns(todo)
    examples = [example for _, example in shots]
    statuses: dict[str, int] = {}
    for done, turn in enumerate(todo, start=1):
        messages = build_messages(labels, examples, texts[turn])
        reply = chat(endpoint, messages, **({"sleep": sleep} if sleep else {}))
        status = _save_reply(campaign, rater, turn, reply, labels, endpoint.key)
        statuses[status] = statuses.get(status, 0) + 1
        if progress:
            progress(done, len(todo))
    return {"rater": rater, "items": len(todo), "few_shot": len(examples), "statuses": statuses}


def _not_yet_rated(campaign: Campaign, rater: str, turns: list[int]) -> list[int]:
    rated = set(
        RaterAnswer.objects.filter(campaign=campaign, rater=rater, status=RaterAnswer.OK).values_list(
            "turn_id", flat=True
        )
    )
    return [turn for turn in turns if turn not in rated]


def _save_reply(
    campaign: Campaign, rater: str, turn: int, reply: EndpointReply, labels: list[str], key: str = ""
) -> str:
    fields = {
        "calls": reply.calls,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "seconds": reply.seconds,
        "label_text": "",
        "confidence": None,
        "detail": reply.detail[:500],
        "status": reply.status,
    }
    if reply.status == RaterAnswer.OK:
        answer = read_answer(reply.content, labels)
        if answer.label:
            fields["label_text"] = answer.label
        elif answer.outside:
            fields.update(status=RaterAnswer.OUTSIDE, detail=f"answered {answer.outside!r}, not a label of the set")
        else:
            shown = scrub(reply.content, also=(key,))[:400]  # scrubbed whole, then cut
            fields.update(status=RaterAnswer.MALFORMED, detail=f"no label in the reply: {shown!r}")
    # the endpoint scrubbed its own error texts; a reply quoted here is the model's, scrubbed too
    fields["detail"] = scrub(fields["detail"], also=(key,))[:500]
    RaterAnswer.objects.update_or_create(campaign=campaign, rater=rater, turn_id=turn, defaults=fields)
    return fields["status"]


def rate_with_model_version(campaign: Campaign, version: ModelVersion) -> dict:
    """The model version's stored top prediction per turn as its answer (its confidence kept)."""
    labels = set(campaign_labels(campaign).values_list("name", flat=True))
    turns = campaign_turns(campaign)
    predictions = {
        turn: (label, confidence)
        for turn, label, confidence in Prediction.objects.filter(model_version=version, turn_id__in=turns).values_list(
            "turn_id", "label__name", "confidence"
        )
    }
    rater = f"model-version:{version.pk}"
    statuses: dict[str, int] = {}
    for turn in turns:
        fields = _prediction_fields(predictions.get(turn), labels)
        RaterAnswer.objects.update_or_create(
            campaign=campaign, rater=rater, turn_id=turn, defaults={**fields, "model_version": version}
        )
        statuses[fields["status"]] = statuses.get(fields["status"], 0) + 1
    return {"rater": rater, "items": len(turns), "statuses": statuses}


def _prediction_fields(prediction: tuple[str, float] | None, labels: set[str]) -> dict:
    if prediction is None:
        detail = "no prediction: run the bulk_annotate job with this model version over the campaign's dialogues"
        return {"status": RaterAnswer.NO_PREDICTION, "label_text": "", "confidence": None, "detail": detail}
    label, confidence = prediction
    if label not in labels:
        return {"status": RaterAnswer.OUTSIDE, "label_text": "", "confidence": confidence, "detail": label}
    return {"status": RaterAnswer.OK, "label_text": label, "confidence": confidence, "detail": ""}
