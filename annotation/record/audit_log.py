"""The audit log's table: one row per change of a recorded kind, never updated, never deleted.

Written only through annotation.record.audit (the one writer). Rows name what they are about by plain
ids (no foreign keys): deleting a campaign, a worker or an account must neither cascade into the
log nor rewrite it (SET_NULL would be an UPDATE). The model, its queryset and the admin refuse
updates and deletes; on PostgreSQL a trigger (migration 0008) refuses them in the database too.
"""

from django.db import models
from django.utils import timezone


class AppendOnly(Exception):
    """An attempt to change or remove an audit entry."""


class AuditQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("audit entries are never updated")

    def delete(self):
        raise AppendOnly("audit entries are never deleted")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnly("audit entries are never updated")

    def update_or_create(self, defaults=None, create_defaults=None, **kwargs):
        raise AppendOnly("audit entries are never updated")

    def for_campaign(self, campaign_id: int) -> "AuditQuerySet":
        return self.filter(campaign_id=campaign_id)

    def for_worker(self, worker_id: int) -> "AuditQuerySet":
        return self.filter(worker_id=worker_id)

    def for_turn(self, turn_id: int) -> "AuditQuerySet":
        return self.filter(turn_id=turn_id)


class AuditEntry(models.Model):
    USER, SYSTEM = "user", "system"
    ACTOR_KINDS = [(USER, "A person"), (SYSTEM, "A system job")]

    at = models.DateTimeField(default=timezone.now, db_index=True)
    kind = models.CharField(max_length=40, db_index=True)
    actor_kind = models.CharField(max_length=8, choices=ACTOR_KINDS)
    # a username, or a system job's name ("platform-sync", "aggregation")
    actor = models.CharField(max_length=150)
    actor_user_id = models.IntegerField(null=True, blank=True)
    # the person who started a system job, when one did ("" for a scheduled run)
    on_behalf_of = models.CharField(max_length=150, blank=True)
    target_type = models.CharField(max_length=40)
    target_id = models.CharField(max_length=64)
    campaign_id = models.IntegerField(null=True, blank=True, db_index=True)
    worker_id = models.IntegerField(null=True, blank=True, db_index=True)
    turn_id = models.IntegerField(null=True, blank=True, db_index=True)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} {self.target_type} {self.target_id} by {self.actor}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise AppendOnly("audit entries are never updated")
        # an insert always: a row handed an existing pk must not turn into an UPDATE
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("audit entries are never deleted")
