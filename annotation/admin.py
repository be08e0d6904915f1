from django.contrib import admin

from annotation import models


@admin.register(models.Movie)
class MovieAdmin(admin.ModelAdmin):
    list_display = ["title", "year", "imdb_id", "language"]
    search_fields = ["title", "imdb_id"]


@admin.register(models.SubtitleFile)
class SubtitleFileAdmin(admin.ModelAdmin):
    list_display = ["name", "movie", "format", "sentence_count", "turn_count", "dialogue_count", "ingested_at"]


@admin.register(models.Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "position", "is_active"]
    list_filter = ["kind", "is_active"]


@admin.register(models.ModelVersion)
class ModelVersionAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "base_model", "created_at"]


@admin.register(models.TurnSkill)
class TurnSkillAdmin(admin.ModelAdmin):
    list_display = ["turn", "source", "skill", "passed_mic", "model_version", "created_at"]
    list_filter = ["source", "skill"]
    raw_id_fields = ["turn", "model_version"]


@admin.register(models.SkillContext)
class SkillContextAdmin(admin.ModelAdmin):
    list_display = ["dialogue", "kind", "position", "text"]
    list_filter = ["kind"]
    raw_id_fields = ["dialogue"]


@admin.register(models.AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read-only: the audit log is append-only (annotation.audit writes it; nobody edits it)."""

    list_display = ["at", "kind", "actor", "target_type", "target_id", "campaign_id", "reason"]
    list_filter = ["kind", "actor_kind"]
    search_fields = ["actor", "target_id", "reason"]
    actions = None

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
