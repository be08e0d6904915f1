"""The campaign report, cached by a fingerprint of everything it reads (labeling.reports), and
the dashboard's count of the answers bought (labeling.policy.answers_bought) and the rendered
report partial likewise.

The report reads every counted answer of a campaign: linear in the campaign, about a second at
30k answers. A researcher reloads it far more often than its figures change, so a view reads it
from Django's cache under a key that names the campaign's state, and computes it only when that
state changed since the last view.

Why a fingerprint and not a counter bumped by the writers: a counter is stale the day someone
adds a writer and forgets to bump it; a fingerprint is read from the rows themselves, so a change
the writers make anywhere (an answer saved or edited, a submission, an approval or rejection, a
platform's confirmation, an aggregation, a block, a merge of identities, a label accepted or a
proposal refused, a payment) changes the key and the next view computes afresh. Its parts, each an
aggregate over the campaign's assignments or a small table (report_fingerprint):
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
assignment sums see; answers saved to work in progress change no figure and keep the cache. And
an aggregate over the answers is linear in the campaign: 106 ms at 300k answers here, most of
the budget of a page at 1M (docs/benchmarks/report-scale.md).

With REDIS_URL set the cache is Redis, shared by every gunicorn worker; without it each worker
process keeps its own (locmem), so each computes a changed report once. Entries of an old
fingerprint are never read again and expire after REPORT_CACHE_SECONDS. REPORT_CACHE=0 turns the
cache off (bench/report_scale.py measures both ways). Views only read rows and write the cache,
never a row (tests/labeling/test_one_writer.py).
"""

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, IntegerField, Max, Sum
from django.db.models.functions import Cast
from django.template.loader import render_to_string

from annotation.models import AuditEntry, Label
from labeling.models import HIT, AggregatedLabel, Assignment, Campaign, PaymentEntry, Worker
from labeling.report_plots import report_plots
from labeling.reports import campaign_report

KEY_PREFIX = "campaign-report"
T = TypeVar("T")


def cached_campaign_report(campaign: Campaign) -> dict:
    """campaign_report(campaign), from the cache when nothing it reads has changed."""
    return cached_figures(campaign, "report", campaign_report)


def cached_figures(campaign: Campaign, name: str, compute: Callable[[Campaign], T]) -> T:
    """compute(campaign), from the cache when nothing the fingerprint covers has changed. Only
    for figures that read nothing outside it (the report; the answers bought on the dashboard)."""
    if not settings.REPORT_CACHE:
        return compute(campaign)
    return _cached(campaign, name, report_fingerprint(campaign), compute)


def _cached(campaign: Campaign, name: str, fingerprint: str, compute: Callable[[Campaign], T]) -> T:
    key = f"{KEY_PREFIX}:{name}:{campaign.pk}:{fingerprint}"
    figures = cache.get(key)
    if figures is None:
        figures = compute(campaign)
        cache.set(key, figures, settings.REPORT_CACHE_SECONDS)
    return figures


# the rendered report holds forms (block a worker, accept a label): it is cached with this in place
# of the CSRF token, and each view puts its own request's token there (django.middleware.csrf.get_token)
CSRF_PLACEHOLDER = "report-cache-csrf-token-placeholder"


def cached_report_html(campaign: Campaign) -> str:
    """The dashboard's report partial, rendered, with CSRF_PLACEHOLDER for the token. Rendering
    the worker table is most of a cached view's cost (0.5 s at 1,500 workers), so the page is
    kept rendered under the same fingerprint, read once for both (the page and its figures).
    The template reads nothing of the request."""
    if not settings.REPORT_CACHE:
        return _render_report(campaign, campaign_report(campaign))
    fingerprint = report_fingerprint(campaign)

    def render(campaign: Campaign) -> str:
        return _render_report(campaign, _cached(campaign, "report", fingerprint, campaign_report))

    return _cached(campaign, "report-html", fingerprint, render)


def _render_report(campaign: Campaign, report: dict) -> str:
    context = {"campaign": campaign, "report": report, "plots": report_plots(report), "csrf_token": CSRF_PLACEHOLDER}
    return render_to_string("labeling/researcher/partials/report.html", context)


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
