"""Serializers of the export API: what a request may ask for, and how a job's status reads."""

from django.urls import reverse
from rest_framework import serializers

from annotation.analysis.records import KINDS
from annotation.export.dialogues import LAYOUTS, TURN
from annotation.export.rows import SPLITS
from annotation.export.writers import CSV, FORMATS, JSONL
from jobs.models import JobRun


class ExportFiltersSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KINDS)
    label = serializers.CharField(required=False, allow_blank=True)
    min_confidence = serializers.FloatField(required=False, min_value=0.0, max_value=1.0, allow_null=True)
    source = serializers.CharField(required=False, allow_blank=True)
    split = serializers.ChoiceField(choices=SPLITS, required=False, allow_blank=True)
    model_version = serializers.IntegerField(required=False, min_value=1, allow_null=True)
    layout = serializers.ChoiceField(
        choices=LAYOUTS,
        default=TURN,
        help_text="turn: a record per label; dialogue: a record per dialogue with all its turns (jsonl, hf)",
    )


class StreamExportSerializer(ExportFiltersSerializer):
    # `format` is DRF's own query parameter (renderer choice), hence file_format
    file_format = serializers.ChoiceField(choices=[CSV, JSONL], default=CSV)


class ExportJobRequestSerializer(ExportFiltersSerializer):
    file_format = serializers.ChoiceField(choices=FORMATS)


class ExportJobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = JobRun
        fields = [
            "id",
            "kind",
            "parameters",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "message",
            "result",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "download_url",
        ]
        read_only_fields = fields

    def get_download_url(self, job: JobRun) -> str | None:
        if job.status != JobRun.SUCCEEDED:
            return None
        url = reverse("annotation:analysis_export_download", args=[job.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url
