from django.contrib import admin

from labeling import models, workers


@admin.register(models.Worker)
class WorkerAdmin(admin.ModelAdmin):
    """Read-mostly: a worker row is written by labeling.workers only (the single-writer test), so
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
class CampaignAdmin(admin.ModelAdmin):
    """Settings only: a campaign is created by labeling.campaigns.create_campaign (the researcher
    pages, API, jobs) and its status moved by set_campaign_status, never by a bare save here."""

    list_display = ["name", "status", "dialogues_per_hit", "quiz_per_hit", "workers_per_hit", "created_at"]
    # the entry token is rotated only from the campaign page (labeling.entry_tokens.rotate_entry_token)
    readonly_fields = ["status", "source_sha256", "created_by", "entry_token"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(models.QuizQuestion)
class QuizQuestionAdmin(admin.ModelAdmin):
    list_display = ["text", "gold_label", "source", "is_active"]


@admin.register(models.RaterAnswer)
class RaterAnswerAdmin(admin.ModelAdmin):
    """Read-only: the table of a model rater's answers, each with its calls, tokens and seconds
    (written by labeling.raters.rate only)."""

    list_display = ["rater", "campaign", "turn", "status", "label_text", "calls", "prompt_tokens", "seconds"]
    list_filter = ["status", "rater"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
