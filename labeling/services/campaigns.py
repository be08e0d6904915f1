"""A campaign's life: created as a draft, then draft → open ⇄ paused → closed.

One function per change, shared by pages, API, commands, jobs and importers: `create_campaign`
is the only writer of new Campaign rows and `set_campaign_status` the only writer of their status
(publishing on a platform calls it too). What a task type says about its campaigns (settings, label
set, the arguments it is created from) it says through labeling.task_types.
"""

from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, Sum

from annotation.models import Label
from jobs.webhooks import events as webhook_events
from labeling import task_types
from labeling.models import HIT, LAST_TURN_LABEL, Assignment, Campaign
from labeling.study_flow.config import FlowRefused, clean_flow
from labeling.work import audit_trail, seats
from labeling.work.hits import build_hits

ALLOWED = {
    Campaign.DRAFT: {Campaign.OPEN, Campaign.CLOSED},
    Campaign.OPEN: {Campaign.PAUSED, Campaign.CLOSED},
    Campaign.PAUSED: {Campaign.OPEN, Campaign.CLOSED},
    Campaign.CLOSED: set(),
}


class StatusChangeRefused(ValueError):
    pass


class CampaignRefused(ValueError):
    """A campaign that cannot be created as asked; `field` names the setting at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


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
    labels, fallback_choices: checked by the type's clean_label_set (last_turn_label: the label set
        its HITs offer and accept, None or empty meaning every offered label, and its three
        fallback choices; other types take none).
    settings: any other Campaign field (dialogues_per_hit, reward, ...), but not `status` (a
        campaign starts as a draft; `set_campaign_status` moves it on).
    Raises CampaignRefused naming the field; nothing is saved then.
    """
    if "status" in settings:
        raise CampaignRefused("status", "a campaign starts as a draft; open it with set_campaign_status")
    if not (name or "").strip():
        raise CampaignRefused("name", "a campaign needs a name")
    _check_provenance(settings)
    try:
        kind = task_types.get(task_type)
        config = kind.clean_config(task_config or {})
        label_set, fallback = kind.clean_label_set(list(labels or []), settings.pop("fallback_choices", None))
    except task_types.UnknownTaskType as error:
        raise CampaignRefused("task_type", str(error)) from error
    except task_types.ConfigRefused as refused:
        raise CampaignRefused(refused.field, refused.message) from refused
    if "study_flow" in settings:
        settings["study_flow"] = _clean_study_flow(settings["study_flow"])
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
        audit_trail.campaign_created(
            campaign, {**settings, "task_type": task_type, "task_config": config, "labels": sorted(label_set, key=str)}
        )
    return campaign


def _check_provenance(settings: dict) -> None:
    """A campaign runs here unless an importer says where its answers came from (format named)."""
    provenance = settings.get("provenance", Campaign.RUN_HERE)
    if provenance not in dict(Campaign.PROVENANCE_CHOICES):
        raise CampaignRefused("provenance", f"{provenance!r} is not one of here, imported")
    if provenance == Campaign.IMPORTED and not settings.get("source_format"):
        raise CampaignRefused("source_format", "an imported campaign names the format it was imported from")
    if provenance == Campaign.RUN_HERE and any(settings.get(f) for f in ("source_format", "source_license")):
        raise CampaignRefused("provenance", "a source format or licence belongs to an imported campaign")


def create_campaign_with_hits(name: str, *, task_type: str, created_by=None, **arguments) -> tuple[Campaign, list[HIT]]:
    """Create a campaign of `task_type` and its HITs in one transaction; returns (campaign, hits).

    The type's `prepare_campaign` takes its own arguments out of `arguments` (pairwise: source_a,
    source_b, pairs_csv, csv_name, count, seed, questions) and turns them into its task_config and
    the source its screens are planned from; the rest are Campaign settings, as for create_campaign.
    Raises CampaignRefused naming the field; nothing is saved then.
    """
    arguments = dict(arguments)
    try:
        config, source = task_types.get(task_type).prepare_campaign(arguments, arguments.get("language", "en"))
    except task_types.UnknownTaskType as error:
        raise CampaignRefused("task_type", str(error)) from error
    except task_types.ConfigRefused as refused:
        raise CampaignRefused(refused.field, refused.message) from refused
    with transaction.atomic():
        campaign = create_campaign(name, task_type=task_type, task_config=config, created_by=created_by, **arguments)
        return campaign, build_hits(campaign, source)


def create_pairwise_campaign(name: str, **arguments) -> tuple[Campaign, list[HIT]]:
    """A pairwise (ACUTE-Eval) campaign and its HITs: pairs from two sources (source_a, source_b,
    `count` of them drawn with `seed`) or from `pairs_csv`; see create_campaign_with_hits."""
    return create_campaign_with_hits(name, task_type="pairwise", **arguments)


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
    with transaction.atomic():
        if not Campaign.objects.filter(pk=campaign.pk, status=current).update(status=status):
            raise StatusChangeRefused("the campaign changed meanwhile; reload and try again")
        audit_trail.setting_changed(campaign, "status", current, status)
    campaign.status = status
    if status == Campaign.OPEN:
        seats.recount(campaign.hits.all())  # opening repairs any count a hand edit left wrong
    return campaign


# Settings a researcher may change once the campaign exists: ones that change no HIT already built
# and no pay already promised. Each change is recorded with its reason (labeling.work.audit_trail).
# The study flow's texts (consent, instructions, practice, survey) may change too: a consent whose
# words change gets a new version, asked again of everyone (labeling.study_flow.config.clean_flow).
EDITABLE_SETTINGS = ("name", "description", "adjudicate_posterior_below", "study_flow")


def _clean_study_flow(raw, previous: dict | None = None) -> dict:
    try:
        return clean_flow(raw, previous)
    except FlowRefused as refused:
        raise CampaignRefused(refused.field, refused.message) from refused


def change_campaign_settings(campaign: Campaign, changes: dict, reason: str = "") -> list[str]:
    """Change editable settings (EDITABLE_SETTINGS), each checked by the model's own validators;
    returns the names that changed. Raises CampaignRefused naming the field; nothing is saved then."""
    for name in changes:
        if name not in EDITABLE_SETTINGS:
            raise CampaignRefused(name, f"cannot be changed here; editable: {', '.join(EDITABLE_SETTINGS)}")
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if "study_flow" in changes:
            changes = {**changes, "study_flow": _clean_study_flow(changes["study_flow"], locked.study_flow)}
        changed = {name: value for name, value in changes.items() if getattr(locked, name) != value}
        for name, value in changed.items():
            setattr(locked, name, value)
        try:
            locked.full_clean(exclude=[f.name for f in Campaign._meta.fields if f.name not in changed])
        except ValidationError as error:
            field, messages = next(iter(error.message_dict.items()))
            raise CampaignRefused(field, " ".join(messages)) from error
        if changed:
            locked.save(update_fields=list(changed))
        if "study_flow" in changed:  # the screens' label names per language, cached per process
            texts_changed = task_types.of(locked).texts_changed
            transaction.on_commit(lambda: texts_changed(locked.pk))
        for name, value in changed.items():
            audit_trail.setting_changed(campaign, name, getattr(campaign, name), value, reason)
    for name, value in changed.items():
        setattr(campaign, name, value)
    return list(changed)


def announce_progress(campaign_id: int) -> None:
    """After a submission commits: campaign.filled once every seat of the campaign is taken, and
    campaign.completed once every seat holds submitted work (each once per campaign). The check
    (one query while a seat is free) runs only when an endpoint wants the kind, after the commit."""
    progress = _Progress(campaign_id)
    webhook_events.emit("campaign.filled", f"campaign.filled:{campaign_id}", progress.filled, send_now=False)
    webhook_events.emit("campaign.completed", f"campaign.completed:{campaign_id}", progress.completed, send_now=False)


class _Progress:
    """A campaign's seats, read once for both events."""

    def __init__(self, campaign_id: int) -> None:
        self.campaign_id = campaign_id
        self._seats: dict | None = None

    def seats(self) -> dict:
        if self._seats is None:
            self._seats = HIT.objects.filter(campaign_id=self.campaign_id).aggregate(
                total=Sum("required_workers"), free=Count("pk", filter=Q(seats_free__gt=0))
            )
        return self._seats

    def filled(self) -> dict | None:
        seats = self.seats()
        if not seats["total"] or seats["free"]:
            return None
        return {"campaign": self.campaign_id, "seats": seats["total"]}

    def completed(self) -> dict | None:
        filled = self.filled()  # every seat holds submitted work only once every seat is taken
        if filled is None:
            return None
        done = Assignment.objects.done().filter(hit__campaign_id=self.campaign_id, phantom=False).count()
        return {**filled, "submitted": done} if done >= filled["seats"] else None
