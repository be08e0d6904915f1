"""A campaign's life: created as a draft, then draft → open ⇄ paused → closed.

One function per change, shared by pages, API, commands, jobs and importers: `create_campaign`
is the only writer of new Campaign rows and `set_campaign_status` the only writer of their status
(publishing on a platform calls it too).
"""

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery

from annotation.models import Label
from labeling import seats
from labeling.models import LAST_TURN_LABEL, Campaign

ALLOWED = {
    Campaign.DRAFT: {Campaign.OPEN, Campaign.CLOSED},
    Campaign.OPEN: {Campaign.PAUSED, Campaign.CLOSED},
    Campaign.PAUSED: {Campaign.OPEN, Campaign.CLOSED},
    Campaign.CLOSED: set(),
}

# shown when a dialogue's target turn has no weak-labeler prediction, unless the campaign says otherwise
DEFAULT_FALLBACK_CHOICES = ("Neutral", "Questioning", "Acknowledging")


class StatusChangeRefused(ValueError):
    pass


class CampaignRefused(ValueError):
    """A campaign that cannot be created as asked; `field` names the setting at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


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


def create_campaign(
    name: str,
    *,
    labels: Iterable[Label] | None = None,
    created_by=None,
    task_type: str = LAST_TURN_LABEL,
    task_config: dict | None = None,
    **settings,
) -> Campaign:
    """Create a draft campaign; the one way a Campaign row comes to be.

    task_type: a name in labeling.task_types' registry; task_config: that type's settings,
        checked (and completed with defaults) by its clean_config.
    labels: for a type that uses labels (last_turn_label), the label set its HITs offer and
        accept; None or empty means `default_label_set()`. Other types take none.
    settings: any other Campaign field (dialogues_per_hit, reward, fallback_choices, ...), but not
        `status` (a campaign starts as a draft; `set_campaign_status` moves it on).
    fallback_choices: three label names of the set, in the taxonomy's spelling once saved;
        default DEFAULT_FALLBACK_CHOICES (or the set's first three when those are not in it).
    Raises CampaignRefused naming the field; nothing is saved then.
    """
    from labeling import task_types

    if "status" in settings:
        raise CampaignRefused("status", "a campaign starts as a draft; open it with set_campaign_status")
    if not (name or "").strip():
        raise CampaignRefused("name", "a campaign needs a name")
    try:
        kind = task_types.get(task_type)
        config = kind.clean_config(task_config or {})
    except task_types.UnknownTaskType as error:
        raise CampaignRefused("task_type", str(error)) from error
    except task_types.ConfigRefused as refused:
        raise CampaignRefused(refused.field, refused.message) from refused
    label_set, fallback = [], []
    if kind.uses_labels:
        label_set = list(labels or []) or list(default_label_set())
        if len(label_set) < 3:
            raise CampaignRefused("labels", "a campaign needs at least three labels to offer")
        fallback = _fallback_in(label_set, settings.pop("fallback_choices", None))
    elif labels or settings.pop("fallback_choices", None):
        raise CampaignRefused("labels", f"a {task_type} campaign offers no labels")
    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name.strip(),
            created_by=created_by,
            fallback_choices=fallback,
            status=Campaign.DRAFT,
            task_type=task_type,
            task_config=config,
            **settings,
        )
        campaign.labels.set(label_set)
    return campaign


def _fallback_in(label_set: list[Label], names: list[str] | None) -> list[str]:
    by_key = Label.objects.filter(pk__in=[label.pk for label in label_set]).by_names(names or DEFAULT_FALLBACK_CHOICES)
    if not names:
        if len(by_key) == len(DEFAULT_FALLBACK_CHOICES):
            return [by_key[name].name for name in DEFAULT_FALLBACK_CHOICES]
        return [label.name for label in sorted(label_set, key=lambda lb: (lb.position, lb.name))[:3]]
    outside = [name for name in names if name not in by_key]
    if outside:
        raise CampaignRefused("fallback_choices", f"not in the campaign's label set: {', '.join(outside)}")
    resolved = [by_key[name].name for name in names]
    if len(set(resolved)) != 3:
        raise CampaignRefused("fallback_choices", "give exactly three different labels")
    return resolved


def set_campaign_status(campaign: Campaign, status: str) -> Campaign:
    """Move the campaign to `status`, refusing a move its current status does not allow.

    The update is conditional on the status read, so two researchers clicking at once cannot
    both succeed with contradictory moves.
    """
    if status not in ALLOWED:
        raise StatusChangeRefused(f"unknown status {status!r}")
    current = campaign.status
    if status == current:
        return campaign
    if status not in ALLOWED[current]:
        raise StatusChangeRefused(f"a {current} campaign cannot become {status}")
    if not Campaign.objects.filter(pk=campaign.pk, status=current).update(status=status):
        raise StatusChangeRefused("the campaign changed meanwhile; reload and try again")
    campaign.status = status
    if status == Campaign.OPEN:
        seats.recount(campaign.hits.all())  # opening repairs any count a hand edit left wrong
    return campaign


def record_suggestion_model(campaign: Campaign, version) -> Campaign:
    """Remember the model version whose top 3 the campaign's HITs offer (the newest build wins)."""
    Campaign.objects.filter(pk=campaign.pk).update(suggestion_model=version)
    campaign.suggestion_model = version
    return campaign
