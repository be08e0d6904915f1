from django.contrib import admin

from annotation import models
from annotation.record.admin_guard import NeverDeleted

CORPUS_KEPT = (
    "{} is never deleted here: its dialogues and turns carry gold labels, answers and predictions "
    "(the study's record), which would go with it unrecorded."
)


@admin.register(models.Movie)
class MovieAdmin(NeverDeleted, admin.ModelAdmin):
    list_display = ["title", "year", "imdb_id", "language"]
    search_fields = ["title", "imdb_id"]
    deletion_refused = CORPUS_KEPT.format("A movie")


@admin.register(models.SubtitleFile)
class SubtitleFileAdmin(NeverDeleted, admin.ModelAdmin):
    list_display = ["name", "movie", "format", "sentence_count", "turn_count", "dialogue_count", "ingested_at"]
    deletion_refused = CORPUS_KEPT.format("A subtitle file")


@admin.register(models.Label)
class LabelAdmin(NeverDeleted, admin.ModelAdmin):
    """A label's name, kind and position are read-only once it exists: gold labels, answers and
    exports name it, and the classifiers index it by position, so a rename here would relabel the
    record unrecorded. Its description and examples (what annotators read) stay editable."""

    list_display = ["name", "kind", "position", "is_active"]
    list_filter = ["kind", "is_active"]
    deletion_refused = (
        "A label is never deleted: gold labels, answers and campaigns' label sets name it. "
        "Untick 'is active' to stop offering it."
    )

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return ["name", "kind", "position"] if obj is not None else []


@admin.register(models.ModelVersion)
class ModelVersionAdmin(NeverDeleted, admin.ModelAdmin):
    list_display = ["name", "kind", "base_model", "created_at"]
    deletion_refused = (
        "A model version is never deleted here: campaigns name it as the model their annotators "
        "saw, and its predictions and labels would go with it unrecorded."
    )
    # what its training wrote: the items it learned from (the study report scores it apart on
    # them), its labels, settings and figures; its name and suggests_since stay editable
    PROVENANCE = ["kind", "base_model", "label_names", "training_data", "hyperparameters", "metrics", "artifact_dir"]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return self.PROVENANCE if obj is not None else []


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
    """Read-only: the audit log is append-only (annotation.record.audit writes it; nobody edits it)."""

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
