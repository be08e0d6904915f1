"""The researcher's figures of a campaign (the report of labeling.reports.campaign, the dashboard's answers
bought, the rendered report partial), served from what was last computed, never computed in a view.

Stale while revalidate. The figures are computed by the refresh job (`refresh_report`, a Celery
task; its work `refresh_figures`), which stores them in the campaign's CampaignFigures row together with the
fingerprint of the state it read (below). A page compares that fingerprint with the campaign's
now: the same, it shows the stored figures; different, it shows them still, labelled "figures as
of <time>; updating…" (htmx polls until the fresh ones are in), and queues the job; nothing stored
yet (a campaign's first view), it shows "computing…" and polls. No page view waits for a
computation: 18 s at 1M answers (docs/benchmarks/report-scale.md).

One job per campaign, however many reloads: a view queues it only when it adds the campaign's
refresh key to the cache (`cache.add`, REPORT_REFRESH_LOCK_SECONDS; shared by every process with
Redis, per process with locmem), the job deletes the key when done, and the job itself runs under
a PostgreSQL advisory lock on the campaign, so a second copy (another process's) returns at once.
The job computes again while the fingerprint moved during its computation (a live study), at
most REPORT_REFRESH_ROUNDS times; a view after that queues it again.

The fingerprint is read before the figures, so figures stored under it are never older than it
says: a change in between reads as stale on the next view and is computed then.

Why a fingerprint and not a counter bumped by the writers: a counter is stale the day someone
adds a writer and forgets to bump it; a fingerprint is read from the rows themselves, so a change
the writers make anywhere (an answer saved or edited, a submission, an approval or rejection, a
platform's confirmation, an aggregation, a block, a merge of identities, a label accepted or a
proposal refused, a payment) changes the key and the next view asks for fresh figures. Its parts,
each an aggregate over the campaign's assignments or a small table (report_fingerprint):
- the campaign's own row (status, name, label set, suggestion model, every column);
- its assignments, per status: count, sum of ids, sum of worker ids, confirmations (count, latest),
  latest submission, quiz marks (count, sum): a move between statuses changes two sums;
- its HITs (count, highest id, seats), its aggregated labels (count, highest id, latest update),
  its payment entries (count, highest id, paid count, latest payment);
- the workers (per status: count and sum of ids; merges): a block or a merge anywhere;
- the taxonomy (every label's id, name and kind) and the audit log's highest id
  (a refused proposal, a block, an adjudication are each an audit entry);
- the settings the report reads (speed flag, suggester warning).
Rows written by raw SQL around the ORM that change none of these would go unseen; none are.

Why not the answers themselves (count, highest id, latest answered_at): the report reads only the
answers of counted assignments (submitted or approved; a platform worker's once confirmed), and an
answer is written only to a live, accepted assignment (labeling.actions.answer.save_response
refuses any other; tests/labeling/test_report_cache.py holds it). So the counted answers change
only when an assignment moves into or out of the counted states or is confirmed, which the
assignment sums see; answers saved to work in progress change no figure and keep the figures.
And an aggregate over the answers is linear in the campaign: 106 ms at 300k answers, most of the
budget of a page at 1M.

The stored report is what the API returns (JSON: Decimals as strings, tuples as lists); the
rendered partial is rendered from the report as computed. A process keeps what it read of a
row in Django's cache under the row's fingerprint (REPORT_CACHE_SECONDS), so an unchanged page
reads one small row head and the cache. REPORT_CACHE=0 computes every figure in the view, as
before (bench/report_scale.py measures both ways). Views only read rows and write the cache; the
job is the one writer of CampaignFigures (tests/labeling/test_one_writer.py).
"""

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import BigIntegerField, BooleanField, Count, Func, IntegerField, Max, Sum, Value
from django.db.models.functions import Cast
from django.template.loader import render_to_string
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from annotation.models import AuditEntry, Label
from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, CampaignFigures, PaymentEntry, Worker
from labeling.reports.campaign import campaign_report
from labeling.reports.plots import report_plots
from labeling.work.policy import answers_bought

logger = logging.getLogger(__name__)

KEY_PREFIX = "campaign-report"
PARTS = ("report", "bought", "html")
# the advisory lock's first key: this module's (the second is the campaign's id)
ADVISORY_LOCK_CLASS = 37_004

# the rendered report holds forms (block a worker, accept a label): it is stored with this in place
# of the CSRF token, and each view puts its own request's token there (django.middleware.csrf.get_token)
CSRF_PLACEHOLDER = "report-cache-csrf-token-placeholder"


@dataclass(frozen=True)
class Shown:
    """One part of a campaign's figures as a page shows it: its value, when it was computed, and
    whether it is current (computed from the campaign as it is now)."""

    value: Any
    computed_at: datetime
    current: bool


def shown_figures(campaign: Campaign, part: str) -> Shown | None:
    """The part ("report", "bought" or "html") of the campaign's figures a page shows now: the
    stored one, current or not (a stale one queues the refresh job); None when nothing was
    computed yet (the job is queued). With REPORT_CACHE=0, computed here and now."""
    if not settings.REPORT_CACHE:
        return Shown(compute_part(campaign, part), timezone.now(), True)
    fingerprint = report_fingerprint(campaign)
    head = _stored_head(campaign.pk)
    if head is None or head[0] != fingerprint:
        request_refresh(campaign.pk)
        head = _stored_head(campaign.pk)  # a job run at once (tests' eager mode) stored it already
        if head is None:
            return None
    stored_fingerprint, computed_at = head
    return Shown(_stored_part(campaign.pk, stored_fingerprint, part), computed_at, stored_fingerprint == fingerprint)


def cached_campaign_report(campaign: Campaign) -> dict | None:
    """The campaign report as the API returns it (stored, possibly stale; None: being computed)."""
    shown = shown_figures(campaign, "report")
    return None if shown is None else shown.value


def compute_part(campaign: Campaign, part: str) -> Any:
    if part == "report":
        return as_json(campaign_report(campaign))
    if part == "bought":
        return answers_bought(campaign)
    if part == "html":
        return render_report(campaign, campaign_report(campaign))
    raise ValueError(f"part: one of {PARTS}, not {part!r}")


def as_json(value: Any) -> Any:
    """The value as the API shows it and the row stores it."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def render_report(campaign: Campaign, report: dict) -> str:
    """The dashboard's report partial, with CSRF_PLACEHOLDER for the token (the template reads
    nothing of the request)."""
    context = {"campaign": campaign, "report": report, "plots": report_plots(report), "csrf_token": CSRF_PLACEHOLDER}
    return render_to_string("labeling/researcher/partials/report.html", context)


def _stored_head(campaign_id: int) -> tuple[str, datetime] | None:
    return CampaignFigures.objects.filter(campaign_id=campaign_id).values_list("fingerprint", "computed_at").first()


def _stored_part(campaign_id: int, fingerprint: str, part: str) -> Any:
    if part not in PARTS:
        raise ValueError(f"part: one of {PARTS}, not {part!r}")
    key = f"{KEY_PREFIX}:{part}:{campaign_id}:{fingerprint}"
    value = cache.get(key)
    if value is None:
        # the row may have moved on since its head was read: keep it under its own fingerprint
        row = CampaignFigures.objects.filter(campaign_id=campaign_id).values_list("fingerprint", part).first()
        value = row[1]
        cache.set(f"{KEY_PREFIX}:{part}:{campaign_id}:{row[0]}", value, settings.REPORT_CACHE_SECONDS)
    return value


# --- the refresh job ------------------------------------------------------------------------------


def _refresh_key(campaign_id: int) -> str:
    return f"{KEY_PREFIX}:refreshing:{campaign_id}"


def request_refresh(campaign_id: int) -> bool:
    """Queue the refresh job for the campaign unless one was queued and has not finished (within
    REPORT_REFRESH_LOCK_SECONDS); whether it was queued."""
    if not cache.add(_refresh_key(campaign_id), True, settings.REPORT_REFRESH_LOCK_SECONDS):
        return False
    try:
        refresh_report.delay(campaign_id)
    except BrokerUnavailable as error:
        # the page still shows the figures it has (labelled); the next view asks again
        cache.delete(_refresh_key(campaign_id))
        logger.warning("campaign %s: the figures' refresh could not be queued: %s", campaign_id, error)
        return False
    return True


# acks_late: the work is idempotent (it stores the figures of the state it reads, under its
# fingerprint) and a copy of it that finds another computing the campaign returns at once.
# Defined here, where it is queued; labeling/tasks.py names it for Celery's autodiscovery.
@shared_task(name="labeling.refresh_report", acks_late=True, ignore_result=True)
def refresh_report(campaign_id: int) -> dict:
    """The refresh job: compute and store a campaign's researcher figures (refresh_figures)."""
    return refresh_figures(campaign_id)


def refresh_figures(campaign_id: int) -> dict:
    """The refresh job's work: compute the campaign's figures and store them under the fingerprint
    read first, again while it moved during the computation (at most REPORT_REFRESH_ROUNDS), unless
    another copy of the job holds the campaign (it returns at once then)."""
    try:
        with transaction.atomic():
            if not _lock_campaign(campaign_id):
                return {"campaign": campaign_id, "busy": True, "computed": 0}
            computed = 0
            for _ in range(settings.REPORT_REFRESH_ROUNDS):
                campaign = Campaign.objects.filter(pk=campaign_id).first()
                if campaign is None:
                    break
                fingerprint = report_fingerprint(campaign)
                head = _stored_head(campaign_id)
                if head is not None and head[0] == fingerprint:
                    break
                store_figures(campaign, fingerprint)
                computed += 1
            return {"campaign": campaign_id, "busy": False, "computed": computed}
    finally:
        cache.delete(_refresh_key(campaign_id))


class _TryAdvisoryXactLock(Func):
    """PostgreSQL's pg_try_advisory_xact_lock(bigint): true when this transaction holds the key."""

    function = "pg_try_advisory_xact_lock"
    output_field = BooleanField()


def _lock_campaign(campaign_id: int) -> bool:
    """A transaction-scoped advisory lock on the campaign's figures (PostgreSQL; elsewhere one
    process is assumed); False when another transaction holds it, or the campaign is gone."""
    if connection.vendor != "postgresql":
        return True
    key = Cast(Value((ADVISORY_LOCK_CLASS << 32) + campaign_id), BigIntegerField())
    locked = Campaign.objects.filter(pk=campaign_id).annotate(locked=_TryAdvisoryXactLock(key))
    return bool(locked.values_list("locked", flat=True).first())


def store_figures(campaign: Campaign, fingerprint: str) -> CampaignFigures:
    """Compute every figure of the campaign and store it under `fingerprint` (read before). The
    one writer of CampaignFigures."""
    started = time.perf_counter()
    report = campaign_report(campaign)
    values = {
        "fingerprint": fingerprint,
        "computed_at": timezone.now(),
        "report": as_json(report),
        "bought": as_json(answers_bought(campaign)),
        "html": render_report(campaign, report),
    }
    values["seconds"] = round(time.perf_counter() - started, 3)
    figures, _ = CampaignFigures.objects.update_or_create(campaign=campaign, defaults=values)
    logger.info("campaign %s: figures computed in %.1f s", campaign.pk, values["seconds"])
    return figures


# --- the fingerprint ------------------------------------------------------------------------------


def report_fingerprint(campaign: Campaign) -> str:
    """A digest of every state the campaign report reads (see the module's docstring)."""
    parts = [
        _campaign_row(campaign),
        _assignments(campaign),
        _hits(campaign),
        _aggregations(campaign),
        _payments(campaign),
        _workers(),
        _taxonomy(),
        AuditEntry.objects.aggregate(last=Max("pk"))["last"],
        (
            settings.FAST_WORKER_MEDIAN_SECONDS,
            settings.FAST_WORKER_MIN_ANSWERS,
            settings.SUGGESTER_OTHER_WARN_RATE,
            settings.SUGGESTER_WARN_MIN_ANSWERS,
        ),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _campaign_row(campaign: Campaign) -> tuple:
    # read again: the caller's instance may be older than the row
    fields = [field.attname for field in Campaign._meta.concrete_fields]
    return tuple(Campaign.objects.filter(pk=campaign.pk).values_list(*fields).first() or ())


def _assignments(campaign: Campaign) -> list:
    rows = (
        Assignment.objects.filter(hit__campaign=campaign)
        .values("status")
        .annotate(
            n=Count("pk"),
            ids=Sum("pk"),
            people=Sum("worker_id"),
            confirmed=Count("platform_confirmed_at"),
            last_confirmed=Max("platform_confirmed_at"),
            last_submitted=Max("submitted_at"),
            marked=Count("quiz_correct"),
            marks=Sum(Cast("quiz_correct", IntegerField())),
        )
        .order_by("status")
    )
    return [tuple(row.values()) for row in rows]


def _hits(campaign: Campaign) -> tuple:
    row = HIT.objects.filter(campaign=campaign).aggregate(n=Count("pk"), last=Max("pk"), seats=Sum("required_workers"))
    return tuple(row.values())


def _aggregations(campaign: Campaign) -> tuple:
    row = AggregatedLabel.objects.filter(campaign=campaign).aggregate(
        n=Count("pk"), last=Max("pk"), latest=Max("updated_at")
    )
    return tuple(row.values())


def _payments(campaign: Campaign) -> tuple:
    row = PaymentEntry.objects.filter(assignment__hit__campaign=campaign).aggregate(
        n=Count("pk"), last=Max("pk"), paid=Count("paid_at"), latest=Max("paid_at")
    )
    return tuple(row.values())


def _workers() -> list:
    rows = (
        Worker.objects.values("status")
        .annotate(n=Count("pk"), ids=Sum("pk"), merged=Count("merged_into"), into=Sum("merged_into_id"))
        .order_by("status")
    )
    return [tuple(row.values()) for row in rows]


def _taxonomy() -> list:
    # every label (a few dozen rows): a rename or a kind changed reads as a change too
    return list(Label.objects.order_by("pk").values_list("pk", "name", "kind"))
