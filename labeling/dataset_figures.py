"""The crowd figures a dataset card states per campaign (annotation.export.card.register_figures
names `card_figures`, labeling.apps): items, majority, Fleiss' kappa, Gwet's AC1, workers, answers
and adjudicated items, from the same votes aggregation counts (labeling.crowd.agreement).

One function on purpose: the study report (issue 36, part 1) computes these and more with
intervals; pointing `register_figures` at it replaces this without touching the card."""

from collections.abc import Sequence

from labeling.crowd.agreement import fleiss_kappa, gwet_ac1, rating_table
from labeling.models import AggregatedLabel, Campaign
from labeling.task_types.last_turn_label.aggregation import campaign_votes


def card_figures(campaign_ids: Sequence[int]) -> list[dict]:
    return [campaign_figures(campaign) for campaign in Campaign.objects.filter(pk__in=campaign_ids).order_by("pk")]


def campaign_figures(campaign: Campaign) -> dict:
    votes = campaign_votes(campaign)
    answers = [[answer for _, answer in held.answers] for held in votes.values()]
    table = rating_table(answers)
    statuses = AggregatedLabel.objects.filter(campaign=campaign)
    majority = sum(1 for held in votes.values() if held.majority().is_majority)
    return {
        "campaign": campaign.pk,
        "name": campaign.name,
        "items": len(votes),
        "majority": majority,
        "majority_share": majority / len(votes) if votes else None,
        "fleiss_kappa": fleiss_kappa(table),
        "gwet_ac1": gwet_ac1(table),
        "workers": len({worker for held in votes.values() for worker, _ in held.answers}),
        "answers": sum(len(row) for row in answers),
        "adjudicated": statuses.filter(status=AggregatedLabel.ADJUDICATED).count(),
    }
