"""A campaign's redundancy policy in the shell: its settings as a `RedundancyPolicy`, the model's
confidence per turn, and the answers bought against what `fixed` would have bought.

The rules themselves are pure, in labeling.crowd.redundancy.
"""

from django.db.models import Count

from annotation.models import ModelVersion, Prediction
from labeling.crowd.redundancy import MODEL_INFORMED, RedundancyPolicy, first_seats
from labeling.models import Campaign, HITItem, Response, counted_assignment_q


def policy_of(campaign: Campaign) -> RedundancyPolicy:
    return RedundancyPolicy(
        name=campaign.redundancy_policy,
        workers=campaign.workers_per_hit,
        cap=campaign.redundancy_cap,
        threshold=campaign.model_threshold,
        posterior_below=campaign.posterior_below,
    )


def model_tops(
    campaign: Campaign, turn_ids: list[int], suggester: ModelVersion | None = None
) -> dict[int, tuple[str, float]]:
    """Per turn, the suggestion model's top label and its calibrated probability (model_informed
    only: the other policies never ask the model)."""
    version = suggester or campaign.suggestion_model or ModelVersion.objects.suggester()
    if campaign.redundancy_policy != MODEL_INFORMED or version is None:
        return {}
    found = Prediction.objects.filter(model_version=version, turn_id__in=turn_ids).values_list(
        "turn_id", "label__name", "confidence"
    )
    return {turn_id: (label, confidence) for turn_id, label, confidence in found}


def first_seat_groups(
    campaign: Campaign, dialogues: list, last_turns: dict, suggester: ModelVersion | None = None
) -> list[tuple[int, list]]:
    """The dialogues, in their order, grouped by the seats their HITs start with: one group for
    `fixed` and `until_agreement`; for `model_informed` the confident ones (one seat) first."""
    policy = policy_of(campaign)
    tops = model_tops(campaign, [turn.pk for turn in last_turns.values()], suggester)
    groups: dict[int, list] = {}
    for dialogue in dialogues:
        confidence = tops.get(last_turns[dialogue.pk].pk, (None, None))[1]
        groups.setdefault(first_seats(policy, confidence), []).append(dialogue)
    return sorted(groups.items())


def answers_bought(campaign: Campaign) -> dict:
    """Work answers saved (quiz screens left out) against workers_per_hit per answered item, as
    `fixed` buys (items no one answered yet are counted in `items`, not as a saving)."""
    saved = Response.objects.filter(
        counted_assignment_q("assignment__"), item__hit__campaign=campaign, item__quiz_question__isnull=True
    ).count()
    work = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True).exclude(target_turn__isnull=True)
    items = work.aggregate(turns=Count("target_turn", distinct=True))["turns"]
    answered = work.filter(counted_assignment_q("responses__assignment__")).aggregate(
        turns=Count("target_turn", distinct=True)
    )["turns"]
    # an item nobody answered yet is not a saving: `fixed` would not have bought it either so far
    fixed = answered * campaign.workers_per_hit
    return {
        "policy": campaign.redundancy_policy,
        "answers": saved,
        "items": items,
        "answered_items": answered,
        "fixed_answers": fixed,
        "saved_share": round(1 - saved / fixed, 3) if fixed else 0.0,
    }
