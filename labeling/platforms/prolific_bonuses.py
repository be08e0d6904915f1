"""Prolific's bulk bonuses, each step recorded in the ledger first (labeling.services.payments). A mixin of
labeling.platforms.prolific.ProlificPlatform: every call goes through its `_request`.

A bulk bonus is two calls: "set up" (an unpaid payment object, for one study's participants) and
"pay" (202 Accepted; NOT idempotent: paying one object twice pays twice).
https://docs.prolific.com/api-reference/bonuses/set-up-bonus-payments,
https://docs.prolific.com/api-reference/bonuses/pay-bonus-payments. Prolific recommends at most
BULK_BONUS_IDS ids per set-up, so larger lists are split. Each object is paid on its own: one that
fails is noted and the others go on; the failures are raised together after the last.
"""

from decimal import Decimal

from labeling.models import PaymentEntry, Publication
from labeling.platforms import calls
from labeling.platforms.base import PlatformError
from labeling.platforms.prolific_studies import refused_outright

BULK_BONUS_IDS = 200


class ProlificBonuses:
    def pay_bonuses(self, publication: Publication, entries: list[PaymentEntry]) -> int:
        """Pay through objects set up earlier (an interrupted run), then set up and pay the rest in
        chunks of BULK_BONUS_IDS participants. Returns how many entries were paid now."""
        paid, errors = 0, []
        for reference in sorted({e.platform_reference for e in entries if e.platform_reference}):
            paid += self._pay_isolated(reference, errors)
        fresh = [e for e in entries if not e.platform_reference]
        for chunk in _chunks_by_participant(fresh):
            try:
                reference = self._set_up(publication, chunk)
            except PlatformError as error:
                errors.append(str(error))
                continue
            paid += self._pay_isolated(reference, errors)
        if errors:
            raise PlatformError(f"bonuses: {len(errors)} failed: " + "; ".join(errors)[:1500])
        return paid

    def _set_up(self, publication: Publication, entries: list[PaymentEntry]) -> str:
        from labeling.services.payments import attach_platform_reference

        by_participant: dict[str, Decimal] = {}
        for entry in entries:
            participant = entry.assignment.platform_submission.worker_external_id
            by_participant[participant] = by_participant.get(participant, Decimal(0)) + entry.amount
        csv = "\n".join(f"{participant},{amount:.2f}" for participant, amount in sorted(by_participant.items()))
        created = self._request(
            "set up bonuses",
            "POST",
            "/submissions/bonus-payments/",
            repeatable=False,  # a lost answer leaves an unpaid object behind: harmless
            json={"study_id": publication.external_id, "csv_bonuses": csv},
        )
        tied = attach_platform_reference([e.pk for e in entries], created["id"])
        if len(tied) != len(entries):
            raise PlatformError(f"bulk bonus {created['id']}: another run paid some of these entries; left unpaid")
        return created["id"]

    def _pay_isolated(self, reference: str, errors: list[str]) -> int:
        try:
            return self._pay(reference)
        except PlatformError as error:
            errors.append(f"bulk bonus {reference}: {error}")
            return 0

    def _pay(self, reference: str) -> int:
        from labeling.services.payments import abandon_reference, mark_entries_paid, start_pay

        if not start_pay(reference):
            return 0  # another run sends (or sent) this pay call
        try:
            self._request("pay bonuses", "POST", f"/bulk-bonus-payments/{reference}/pay/", repeatable=False)
        except calls.PlatformCallError as error:
            if refused_outright(error):
                abandon_reference(reference)  # refused outright: nothing was paid
            raise  # anything else: the entries stay "pay started" for a researcher to check
        return mark_entries_paid(reference=reference)


def _chunks_by_participant(entries: list[PaymentEntry]) -> list[list[PaymentEntry]]:
    """Entries grouped so that no chunk names more than BULK_BONUS_IDS participants."""
    chunks: list[list[PaymentEntry]] = []
    seen: list[set[str]] = []
    for entry in entries:
        participant = entry.assignment.platform_submission.worker_external_id
        for chunk, names in zip(chunks, seen, strict=True):
            if participant in names or len(names) < BULK_BONUS_IDS:
                chunk.append(entry)
                names.add(participant)
                break
        else:
            chunks.append([entry])
            seen.append({participant})
    return chunks
