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
