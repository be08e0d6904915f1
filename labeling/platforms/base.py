"""What every crowd platform adapter offers. One module per outside service implements it."""

from dataclasses import dataclass, field
from typing import Protocol

from labeling.models import HIT


@dataclass(frozen=True)
class ExternalResult:
    """One worker's assignment as the platform reports it."""

    assignment_id: str
    worker_id: str
    status: str  # the platform's word: Submitted, Approved, Rejected ...
    answers: dict[str, str] = field(default_factory=dict)  # e.g. the completion code posted back


class CrowdPlatform(Protocol):
    name: str

    def publish_hit(self, hit: HIT, url: str) -> str:
        """Offer the HIT to the platform's workers, pointing them at `url`; returns the external id."""
        ...

    def fetch_results(self, hit: HIT) -> list[ExternalResult]:
        """The assignments the platform holds for a published HIT."""
        ...

    def approve(self, result: ExternalResult) -> None:
        """Approve (and so pay) an assignment on the platform."""
        ...


class PlatformError(RuntimeError):
    pass
