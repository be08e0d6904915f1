"""The one writer of Worker rows: every worker is created, found, merged and blocked here.

- A site account's worker (`worker_for_user`), made on first use.
- A crowd-platform landing's identity (`platform_worker`): a Worker keyed by the platform's
  worker id AND the platform's id of the work it came with (MTurk assignmentId, Prolific
  SESSION_ID), since the unsigned worker id alone proves nothing. It gets a plain (never staff)
  site account of its own. One the platform stood behind at landing (Prolific) is merged into the
  id's proven worker at once; new unproven ones are capped by what their client address, its IPv6
  /48 and their campaign hold (settings PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR,
  _PER_IPV6_48_PER_HOUR, _PER_CAMPAIGN_PER_HOUR): unproven identities with live work, never the
  landings an address was refused or the work it finished, so made-up landings from a shared
  address cannot lock out the honest workers behind it.
- The platform id's proven worker (`merge_proven_identity`): a landing's identity points at it
  once the platform confirms its submission; aggregation, agreement and reports count through it.
- The proven workers of an imported results file (`imported_workers`).
- Blocking and unblocking (`set_blocked`); a blocked worker claims no HIT, and blocking any
  identity of a platform id blocks that id's landings (`landing_standing`).

`tests/labeling/test_one_writer.py` fails when another module writes Worker rows.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext

from annotation.record import audit
from config.web.client_ip import address_block
from labeling.fast_path import compiled as fast_path
from labeling.models import Assignment, Campaign, Worker

# an IPv6 site (a home, an office) often holds a whole /48: its /64s share one cap too
SITE_PREFIX = 48
# an identity made this recently that holds no work yet is still claiming its HIT (it is made in
# one transaction and claims in the next): it counts toward its address's cap, so a burst of
# landings cannot all pass the count before any of them holds something
CLAIMING = timedelta(seconds=30)


class AccountConflict(Exception):
    """The platform worker's site account cannot be used (taken name, staff or inactive account)."""


class SignupLimited(Exception):
    """Too many new workers from this address, or for this campaign, in the last hour."""


class AddressUnreadable(SignupLimited):
    """The client's address cannot be read, so no cap could count this landing: refused."""


# --- Site workers -------------------------------------------------------------------------------


def worker_for_user(user) -> Worker:
    """The site Worker of a site account, created on first use."""
    # every claim starts here (with the fast path on, a read by SQL built once)
    user_id = user.pk
    worker = fast_path.worker_of(user_id) if fast_path.enabled() else Worker.objects.filter(user_id=user_id).first()
    if worker is not None:
        return worker
    # get_or_create's own way, without its second read of what was just found missing: a new
    # account's first page, every arrival of a study's first second (issue 37)
    try:
        with transaction.atomic():
            return Worker.objects.create(user_id=user_id, platform=Worker.SITE, external_id=user.get_username())
    except IntegrityError:  # another request of the same account created it first
        return Worker.objects.get(user_id=user_id)


# --- Platform landings: pending identities ------------------------------------------------------


def platform_worker(
    platform: str,
    external_id: str,
    *,
    landing_key: str,
    campaign: Campaign | None = None,
    ip: str | None = None,
    proven: bool = False,
) -> Worker:
    """The identity of one landing (platform worker id + the platform's id of the work,
    `landing_key`) with its own site account, both created on first arrival; the same landing
    again (a reload, a second tab) gets the same one. `proven`: the platform stood behind this
    landing (a Prolific session it lists as active for this study and participant): it is merged
    into the platform id's proven worker at once and counts toward no landing cap.

    The Worker row is locked while its account is created, so two tabs landing at once create
    one account. An existing account is reused only if it is this Worker's, active, not staff and
    without a password (see _may_sign_in_from_platform). A new unproven identity counts toward the
    landing caps of `ip` and `campaign` (SignupLimited when one is reached or the address cannot
    be read; nothing is created).
    """
    if not landing_key:
        raise ValueError("landing_key: a platform landing needs the platform's id of the work")
    with transaction.atomic():
        keys = {"platform": platform, "external_id": external_id, "landing_key": landing_key}
        # the same landing again (a reload, a second tab): its row, locked, in one statement
        worker = Worker.objects.select_for_update().filter(**keys).first()
        if worker is None:
            if not proven:
                _check_signup_limits(campaign, ip)
            # a proven landing's row is made pointing at the id's proven Worker (merged at once)
            worker = _new_landing(keys, ip, campaign, _proven_worker_of(platform, external_id, ip) if proven else None)
        # a blocked worker is refused by the caller; no account is made for them
        if worker.user_id is None and not worker.is_blocked:
            worker.user = _new_account(f"{platform}-{external_id}-{landing_key}")
            worker.save(update_fields=["user"])
        if proven:
            merge_proven_identity(worker)  # a row made before it was proven: merged now
        user = worker.user
    if user is not None and not _may_sign_in_from_platform(user):
        raise AccountConflict(
            gettext("This worker id is linked to an account that cannot sign in from a crowd platform.")
        )
    return worker


def _new_landing(keys: dict, ip: str | None, campaign: Campaign | None, proven: Worker | None) -> Worker:
    """The landing's row, created (`proven`: merged into that Worker from the start), or, when a
    racing tab created it first, that one, locked. The caller's locking read found none, so the
    INSERT comes first (get_or_create would read again) and a unique key held by the other tab
    sends this one to its row."""
    try:
        with transaction.atomic():
            return Worker.objects.create(
                **keys,
                signup_ip=ip,
                signup_network=address_block(ip, settings.PLATFORM_IPV6_PREFIX),
                signup_site_network=address_block(ip, SITE_PREFIX),
                signup_campaign=campaign,
                merged_into=proven,
            )
    except IntegrityError:
        worker = Worker.objects.select_for_update().filter(**keys).first()
        if worker is None:  # another constraint than the landing's key: get_or_create's rule
            raise
        return worker


def landing_standing(platform: str, external_id: str, landing_key: str) -> tuple[bool, bool]:
    """(blocked, proven) in one read of the platform id's rows: whether the id is blocked (blocking
    any of its identities, or the proven one, blocks the platform id), and whether this landing's
    identity exists and its platform stood behind it already."""
    # the id's rows, by the unique index (platform, external_id, landing_key): one per landing
    flags = Worker.objects.filter(platform=platform, external_id=external_id).aggregate(
        blocked=Count("pk", filter=Q(status=Worker.BLOCKED)),
        proven=Count("pk", filter=Q(landing_key=landing_key, merged_into__isnull=False)),
    )
    return bool(flags["blocked"]), bool(flags["proven"])


def _check_signup_limits(campaign: Campaign | None, ip: str | None) -> None:
    """Refuse a new unproven identity when its address, or its campaign, holds its cap of unproven
    work, or when the address cannot be read (counted nowhere, it would pass every cap). Only
    unproven identities count: a proven one is a person the platform stands behind. Per block: an
    IPv4 address, an IPv6 /PLATFORM_IPV6_PREFIX network, and an IPv6 /48 with its own cap (a
    site's many /64s). An address counts the identities that hold live work (a seat, a phantom
    place, work waiting for the platform's confirmation: `_live_work`) or are still claiming
    (CLAIMING), not the landings it was refused nor work that ended: many made-up ids from one
    address hold no more than the cap, and honest workers behind it land as soon as it holds
    less. Per campaign only identities made in the hour that hold a seat count; the campaign row
    is locked first, so concurrent landings on one campaign count one after another."""
    if ip is None:
        raise AddressUnreadable(
            gettext("Your address could not be read, so this landing cannot be counted; please try again.")
        )
    now = timezone.now()
    network, site = address_block(ip, settings.PLATFORM_IPV6_PREFIX), address_block(ip, SITE_PREFIX)
    if campaign is not None:
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
    held, recent = _held_by_address(now, network, site), _recent_counts(now, campaign, network, site)
    counted = {block: held[block] + recent[f"claiming_{block}"] for block in held} | recent
    limit = settings.PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR
    if campaign is not None and counted["campaign"] >= limit:
        message = gettext("This study has taken %(limit)s new workers in the last hour; please try again later.")
        raise SignupLimited(message % {"limit": limit})
    per_address = settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR
    if counted["network"] >= per_address:
        message = gettext(
            "%(count)s new workers from your address hold HITs they have not finished; please try again later."
        )
        raise SignupLimited(message % {"count": per_address})
    per_site = settings.PLATFORM_NEW_WORKERS_PER_IPV6_48_PER_HOUR
    if ":" in site and counted["site"] >= per_site:
        message = gettext(
            "%(count)s new workers from your network hold HITs they have not finished; please try again later."
        )
        raise SignupLimited(message % {"count": per_site})


def _held_by_address(now, network: str, site: str) -> dict[str, int]:
    """The unproven identities of the address's blocks that hold live work, driven by the live
    work (few rows, indexed by state), so an address's long history of landings costs nothing."""
    by_network, by_site = Q(worker__signup_network=network), Q(worker__signup_site_network=site)
    held = _live_work(now).filter(worker__merged_into__isnull=True)
    counts = {"network": Count("worker", distinct=True, filter=by_network)}
    if ":" in site:
        counts["site"] = Count("worker", distinct=True, filter=by_site)
    return held.filter(by_network | by_site if ":" in site else by_network).aggregate(**counts)


def _recent_counts(now, campaign: Campaign | None, network: str, site: str) -> dict[str, int]:
    """In one statement over identities made lately: the address's blocks' identities still
    claiming (made within CLAIMING, holding no work yet), and the campaign's identities made in
    the hour that hold a seat."""
    claiming = Q(created_at__gte=now - CLAIMING) & ~Q(Exists(Assignment.objects.filter(worker=OuterRef("pk"))))
    counts = {"claiming_network": Count("pk", filter=claiming & Q(signup_network=network))}
    rows = Q(signup_network=network, created_at__gte=now - CLAIMING)
    if ":" in site:
        counts["claiming_site"] = Count("pk", filter=claiming & Q(signup_site_network=site))
        rows |= Q(signup_site_network=site, created_at__gte=now - CLAIMING)
    if campaign is not None:
        this_hour = Q(signup_campaign=campaign, created_at__gte=now - timedelta(hours=1))
        seat = Assignment.objects.filter(
            worker=OuterRef("pk"), status__in=(Assignment.ACCEPTED, Assignment.SUBMITTED), phantom=False
        )
        counts["campaign"] = Count("pk", filter=Q(Exists(seat)) & this_hour)
        rows |= this_hour
    unproven = Worker.objects.filter(merged_into__isnull=True).exclude(landing_key="")
    return unproven.filter(rows).aggregate(**counts)


def _live_work(now):
    """Unproven identities' live work: a seat or phantom place within its time limit, or a seat
    submitted and waiting for the platform within PLATFORM_UNCONFIRMED_GRACE_MINUTES after it
    (labeling.actions.claim gives both back after)."""
    grace = timedelta(minutes=settings.PLATFORM_UNCONFIRMED_GRACE_MINUTES)
    live = Q(status=Assignment.ACCEPTED, expires_at__gt=now)
    waiting = Q(
        status=Assignment.SUBMITTED, phantom=False, platform_confirmed_at__isnull=True, expires_at__gt=now - grace
    )
    return Assignment.objects.filter(live | waiting, unproven=True)


def _may_sign_in_from_platform(user) -> bool:
    """Only an account made by a landing (no password, no staff rights) opens from an unsigned
    platform id; a Worker linked by hand to a real site account must sign in with its password."""
    return user.is_active and not (user.is_staff or user.is_superuser or user.has_usable_password())


def _new_account(username: str):
    User = get_user_model()
    try:
        with transaction.atomic():
            user = User(username=username, is_staff=False, is_superuser=False)
            user.set_unusable_password()
            user.save()
            return user
    except IntegrityError:
        # a site account of that name exists but belongs to no Worker of this id: never take it over
        message = gettext("The account name %(name)r is already taken on this site.")
        raise AccountConflict(message % {"name": username}) from None


def same_person(worker_id) -> QuerySet[Worker]:
    """The worker's rows: a platform worker's every landing (same platform and worker id); a site
    worker's own row. By id only, so a claim's compiled SQL takes it as a parameter."""
    me = Worker.objects.filter(pk=worker_id)
    return Worker.objects.filter(
        platform=Subquery(me.values("platform")[:1]), external_id=Subquery(me.values("external_id")[:1])
    )


def accounts_of_platform_id(platform: str, external_id: str) -> set[int | None]:
    """The site accounts of every identity (landing or proven) of one platform worker id."""
    return set(Worker.objects.filter(platform=platform, external_id=external_id).values_list("user_id", flat=True))


# --- Proven workers -----------------------------------------------------------------------------


def merge_proven_identity(identity: Worker) -> None:
    """The platform confirmed work of this landing's identity: it is the platform id's worker.
    Point it at the id's proven Worker (made now if it is the first), through which aggregation,
    agreement and reports count it; its own account keeps its own pages (history, feedback)."""
    if not identity.is_pending_identity:
        return
    proven = _proven_worker_of(identity.platform, identity.external_id, identity.signup_ip)
    Worker.objects.filter(pk=identity.pk, merged_into__isnull=True).update(merged_into=proven)
    identity.merged_into = proven


def _proven_worker_of(platform: str, external_id: str, ip: str | None) -> Worker:
    """The platform id's proven Worker (no landing key), made with the first proven landing."""
    proven, _ = Worker.objects.get_or_create(
        platform=platform,
        external_id=external_id,
        landing_key="",
        defaults={"signup_ip": ip, "signup_network": address_block(ip, settings.PLATFORM_IPV6_PREFIX)},
    )
    return proven


def imported_workers(platform: str, external_ids: list[str] | tuple[str, ...]) -> list[Worker]:
    """The proven workers of a platform's results file (no landing, no account), in the order of
    `external_ids`, created on first import."""
    return [
        Worker.objects.get_or_create(platform=platform, external_id=external_id, landing_key="")[0]
        for external_id in external_ids
    ]


# --- Blocking -----------------------------------------------------------------------------------


def set_blocked(worker: Worker, blocked: bool, *, reason: str = "") -> str:
    """Block (a blocked worker claims no more HITs and its submissions wait for review) or unblock
    the worker; returns its new status. The researcher pages and the API both call this; a real
    change is recorded in the audit log (by whoever acts now, annotation.record.audit)."""
    status = Worker.BLOCKED if blocked else Worker.ACTIVE
    with transaction.atomic():
        before = Worker.objects.select_for_update().values_list("status", flat=True).get(pk=worker.pk)
        Worker.objects.filter(pk=worker.pk).update(status=status)
        if before != status:
            kind = audit.WORKER_BLOCKED if blocked else audit.WORKER_UNBLOCKED
            audit.record(kind, None, worker, before, status, reason)
    worker.status = status
    return status
