from django.contrib import admin, messages

from annotation.record.admin_guard import ADMIN_REASON, NeverDeleted
from labeling import models
from labeling.services import campaigns, workers


@admin.register(models.Worker)
class WorkerAdmin(admin.ModelAdmin):
    """Read-mostly: a worker row is written by labeling.services.workers only (the single-writer test), so
    the admin adds none and blocks or unblocks through workers.set_blocked, as the pages and API do."""

    list_display = ["external_id", "platform", "country", "status"]
    list_filter = ["platform", "status"]
    actions = ["block_workers", "unblock_workers"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Block the selected workers")
    def block_workers(self, request, queryset) -> None:
        for worker in queryset:
            workers.set_blocked(worker, True)

    @admin.action(description="Unblock the selected workers")
    def unblock_workers(self, request, queryset) -> None:
        for worker in queryset:
            workers.set_blocked(worker, False)


@admin.register(models.Campaign)
class CampaignAdmin(NeverDeleted, admin.ModelAdmin):
    """The settings page's settings only (campaigns.EDITABLE_SETTINGS), changed through
    change_campaign_settings as the page does, so each change is recorded; every other field is
    read-only (a campaign is created by create_campaign, its status moved by set_campaign_status,
    its entry token rotated on its page). A campaign is never deleted here."""

    list_display = ["name", "status", "dialogues_per_hit", "quiz_per_hit", "workers_per_hit", "created_at"]
    deletion_refused = (
        "A campaign is never deleted: its HITs, answers, gold labels and payments are the study's record. "
        "Close it on its campaign page instead."
    )

    def has_add_permission(self, request) -> bool:
        return False

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        fields = self.model._meta.get_fields()
        names = [f.name for f in fields if (f.concrete or f.many_to_many) and not f.auto_created]
        return [name for name in names if name not in campaigns.EDITABLE_SETTINGS]

    def save_model(self, request, obj, form, change) -> None:
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in campaigns.EDITABLE_SETTINGS}
        stored = models.Campaign.objects.get(pk=obj.pk)  # `obj` already holds the new values
        try:
            campaigns.change_campaign_settings(stored, changes, ADMIN_REASON)
        except campaigns.CampaignRefused as refused:
            messages.error(request, f"Not changed: {refused}")

    def save_related(self, request, form, formsets, change) -> None:
        """Nothing related is editable here (the label set is read-only)."""


@admin.register(models.QuizQuestion)
class QuizQuestionAdmin(admin.ModelAdmin):
    """A quiz item's question and answer are read-only once it exists: workers' quiz marks, their
    approval and pay were decided against that answer. Replace a wrong item by importing the pool
    again or retiring it (untick 'is active'); its explanation stays editable."""

    list_display = ["text", "gold_label", "source", "is_active"]
    ANSWER = ["text", "dialogue", "task_type", "gold_label", "gold", "choices", "source"]
    USE = ["exposures", "reveals", "retired_at"]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return self.ANSWER + self.USE if obj is not None else self.USE


@admin.register(models.RaterAnswer)
class RaterAnswerAdmin(admin.ModelAdmin):
    """Read-only: the table of a model rater's answers, each with its calls, tokens and seconds
    (written by labeling.services.raters.rate only)."""

    list_display = ["rater", "campaign", "turn", "status", "label_text", "calls", "prompt_tokens", "seconds"]
    list_filter = ["status", "rater"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
