"""The audit entries of aggregation's gold writes (AggregatedLabel and the crowd TurnLabel), made
by the system job "aggregation" (for the person who started it, when one did), and the reviewers'
labels that aggregation keeps (labeling.services.adjudication writes them)."""

from annotation.record import audit
from annotation.record.audit_log import AuditEntry
from labeling.models import AggregatedLabel, Campaign

AGGREGATION = "aggregation"


def _gold(label_text: str, status: str) -> dict:
    return {"label": label_text or None, "status": status}


def _reason(values: dict) -> str:
    votes = values.get("votes") or {}
    shown = ", ".join(f"{answer} {count}" for answer, count in votes.items())
    return f"{values.get('answer_count', 0)} answers ({shown})" if shown else ""


def aggregated_changed(row: AggregatedLabel, values: dict) -> list[AuditEntry]:
    old, new = _gold(row.label_text, row.status), _gold(values["label_text"], values["status"])
    if old == new:
        return []
    return [_entry(audit.GOLD_CHANGED, row, old, new, _reason(values))]


def aggregated_created(row: AggregatedLabel) -> AuditEntry:
    values = {"votes": row.votes, "answer_count": row.answer_count}
    return _entry(audit.GOLD_CHANGED, row, None, _gold(row.label_text, row.status), _reason(values))


def aggregated_removed(row: AggregatedLabel) -> AuditEntry:
    old = _gold(row.label_text, row.status)
    return _entry(audit.GOLD_REMOVED, row, old, None, "no counted answer left (rejected or withdrawn work)")


def _entry(kind: str, row: AggregatedLabel, old, new, reason: str) -> AuditEntry:
    target = ("aggregatedlabel", row.pk or f"{row.campaign_id}:{row.turn_id}")
    actor = audit.system(AGGREGATION)
    return audit.entry(kind, actor, target, old, new, reason, campaign_id=row.campaign_id, turn_id=row.turn_id)


def turn_labels_changed(
    campaign: Campaign, before: dict, written: list, lost: list, names: dict[int, str]
) -> list[AuditEntry]:
    """Entries for crowd TurnLabels whose label (or owning campaign) changed, and those removed.
    `before`: turn -> (label id, campaign) as it was; `names`: label id -> name."""

    def _label_of(pair: tuple | None) -> dict | None:
        return None if pair is None else {"label": names.get(pair[0]), "campaign": pair[1]}

    actor = audit.system(AGGREGATION)
    entries = []
    for row in written:
        old = before.get(row.turn_id)
        new = (row.label_id, campaign.pk)
        if old == new:
            continue
        entries.append(
            audit.entry(
                audit.GOLD_CHANGED,
                actor,
                ("turnlabel", row.pk or row.turn_id),
                _label_of(old),
                _label_of(new),
                "adjudicated" if "adjudicated" in (row.provenance or {}) else "majority of the crowd",
                campaign_id=campaign.pk,
                turn_id=row.turn_id,
            )
        )
    for row in lost:
        old = _label_of((row.label_id, campaign.pk))
        entries.append(
            audit.entry(audit.GOLD_REMOVED, actor, row, old, None, "no majority any more", campaign_id=campaign.pk)
        )
    return entries


def write(entries: list[AuditEntry]) -> None:
    if entries:
        audit.record_many(entries)


def adjudications(campaign: Campaign) -> dict[int, tuple[str, dict]]:
    """turn -> (label name, {"by", "at", "reason"}) of the campaign's adjudicated rows."""
    rows = AggregatedLabel.objects.filter(campaign=campaign, status=AggregatedLabel.ADJUDICATED).values_list(
        "turn_id", "label_text", "adjudicated_by__username", "adjudicated_at", "adjudication_reason"
    )
    return {
        turn: (label, {"by": by, "at": at.isoformat() if at else None, "reason": reason})
        for turn, label, by, at, reason in rows
    }
