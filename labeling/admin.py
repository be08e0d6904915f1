from django.contrib import admin

from labeling import models


@admin.register(models.Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "platform", "country", "status"]
    list_filter = ["platform", "status"]


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "status", "dialogues_per_hit", "quiz_per_hit", "workers_per_hit", "created_at"]
    # rotated only from the campaign page (labeling.entry_tokens.rotate_entry_token)
    readonly_fields = ["entry_token"]


@admin.register(models.QuizQuestion)
class QuizQuestionAdmin(admin.ModelAdmin):
    list_display = ["text", "gold_label", "source", "is_active"]
