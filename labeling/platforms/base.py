"""What every crowd platform adapter offers. One module per outside service implements it
(local.py, mturk.py, prolific.py); labeling.platforms.sync drives them.

Adapters talk to the platform (always through labeling.platforms.calls) and record only what the
platform answered (ids, the ledger's idempotency keys); deciding what to approve, reject or pay
is sync's, so both platforms follow the same rules.
"""

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from labeling.models import HIT, Campaign, PaymentEntry, Publication
    from labeling.platforms.costs import CostPreview

# a platform's words for the state of one piece of work, normalised
SUBMITTED, APPROVED, REJECTED, ACTIVE, RETURNED = "submitted", "approved", "rejected", "active", "returned"
UNKNOWN = "unknown"  # a word the adapter does not know: recorded, nothing done
# past the platform's time limit, but not final: the participant may still complete (Prolific's
# TIMED-OUT, https://researcher-help.prolific.co/hc/en-gb/articles/360009094694)
TIMED_OUT = "timed_out"


class PlatformError(RuntimeError):
    pass


@dataclass(frozen=True)
class ExternalResult:
    """One worker's piece of work as the platform reports it."""

    assignment_id: str  # MTurk AssignmentId, Prolific submission id (= the SESSION_ID it sent us)
    worker_id: str
    status: str  # normalised: SUBMITTED, APPROVED, REJECTED, ACTIVE, RETURNED, TIMED_OUT, UNKNOWN
    answers: dict[str, str] = field(default_factory=dict)  # e.g. the completion code posted back
    platform_status: str = ""  # the platform's own word
    hit_id: str = ""  # MTurk HITId
    # approved with part of the reward (Prolific's PARTIALLY APPROVED): the share we asked for when we
    # made the transition, None when we did not make it (the platform does not report it)
    paid_share: Decimal | None = None
    share_unknown: bool = False  # approved with part of the reward, the share not known here
    time_taken: int | None = None  # seconds from the platform's start of the work to its completion


class CrowdPlatform(Protocol):
    name: str

    def cost_preview(self, campaign: "Campaign", base_url: str = "") -> "CostPreview":
        """What publishing the campaign's unpublished work would cost, fees included, with the
        hourly rate and the reasons publishing is refused (CostPreview.refusals)."""
        ...

    def publish(self, campaign: "Campaign", base_url: str) -> int:
        """Offer the campaign's unpublished HITs (or places); returns how many. Safe to repeat."""
        ...

    def fetch_results(self, publication: "Publication") -> list[ExternalResult]:
        """Every piece of work the platform holds for the publication."""
        ...

    def approve(self, publication: "Publication", result: ExternalResult) -> None:
        """Approve (and so pay the reward of) one piece of work."""
        ...

    def reject(self, publication: "Publication", result: ExternalResult, reason: str) -> None: ...

    def pay_bonuses(self, publication: "Publication", entries: list["PaymentEntry"]) -> int:
        """Pay the ledger's due bonus entries, recording each step so no retry pays twice;
        returns how many entries were paid now."""
        ...

    def add_places(self, publication: "Publication", hit: "HIT", places: int) -> None:
        """Let one more worker take `hit` (MTurk: an assignment more; Prolific: a place more),
        `places` being the HIT's required workers after the change. Safe to repeat."""
        ...

    def request_return(self, publication: "Publication", result: ExternalResult, reason: str) -> None: ...

    def close(self, publication: "Publication") -> None:
        """Stop offering the work (MTurk: expire the HITs; Prolific: stop the study)."""
        ...
