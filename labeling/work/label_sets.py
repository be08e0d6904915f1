"""A campaign's label set (`Campaign.labels`): the labels its screens offer and accept.

Read by the label task type (choices, the "Other" list, aggregation, the quiz draw) and by the
answer action that checks a picked label; it imports no task type, so both may read it.
"""

from django.db.models import Exists, OuterRef, QuerySet, Subquery

from annotation.models import Label
from labeling.models import Campaign


def default_label_set() -> QuerySet[Label]:
    """Every label an annotator may pick (active, not merely proposed): a new campaign's label set."""
    return Label.objects.offered()


def campaign_labels(campaign: Campaign | int | Subquery) -> QuerySet[Label]:
    """The labels the campaign's HITs offer and accept: its label set, or for a campaign with none
    recorded (rows older than `create_campaign`) the default set. One query, no matter which.
    `campaign`: the campaign, its id, or a subquery giving its id."""
    campaign_id = campaign.pk if isinstance(campaign, Campaign) else campaign
    through = Campaign.labels.through.objects.filter(campaign_id=campaign_id)
    return Label.objects.filter(
        Exists(through.filter(label_id=OuterRef("pk")))
        | (~Exists(through) & Exists(default_label_set().filter(pk=OuterRef("pk"))))
    )
