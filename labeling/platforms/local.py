"""The site itself as a crowd platform, and the default: workers log in and claim HITs here, so
publishing only names the HITs, every answer is already in our tables and nothing is paid out."""

from decimal import Decimal

from labeling.models import HIT, Campaign, PaymentEntry, Publication
from labeling.platforms.base import ExternalResult
from labeling.platforms.costs import CostPreview, cost_preview


class LocalPlatform:
    name = "local"

    def cost_preview(self, campaign: Campaign, base_url: str = "") -> CostPreview:
        seats = sum(campaign.hits.filter(external_id="").values_list("required_workers", flat=True))
        return cost_preview(
            seats=seats,
            reward=campaign.reward,
            bonus=campaign.bonus,
            bonus_share=Decimal(1),
            fee_rate=Decimal(0),
            currency=campaign.currency,
        )

    def publish(self, campaign: Campaign, base_url: str) -> int:
        published = 0
        for hit in campaign.hits.filter(external_id="").order_by("position"):
            published += HIT.objects.filter(pk=hit.pk, external_id="").update(external_id=f"{HIT.LOCAL_PREFIX}{hit.pk}")
        return published

    def fetch_results(self, publication: Publication) -> list[ExternalResult]:
        return []

    def approve(self, publication: Publication, result: ExternalResult) -> None:
        return None

    def reject(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        return None

    def pay_bonuses(self, publication: Publication, entries: list[PaymentEntry]) -> int:
        return 0  # site workers are paid outside the site (mark_paid)

    def add_places(self, publication: Publication, hit: HIT, places: int) -> None:
        return None

    def request_return(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        return None

    def close(self, publication: Publication) -> None:
        return None
