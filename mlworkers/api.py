"""The jobs API (staff only): list and read jobs and model versions, start a job (202 + its id)."""

from rest_framework import mixins, serializers, status, viewsets
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response

from annotation.models import ModelVersion
from mlworkers.jobs import start_job
from mlworkers.models import JobRun
from mlworkers.views import STARTABLE_JOBS


class JobRunSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = JobRun
        fields = [
            "id", "kind", "parameters", "status", "progress_done", "progress_total", "percent", "message",
            "result", "error", "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = [f for f in fields if f not in ("kind", "parameters")]

    def validate_kind(self, kind: str) -> str:
        if kind not in STARTABLE_JOBS:
            raise serializers.ValidationError(
                f"{kind!r} is not a startable job; choose one of {', '.join(STARTABLE_JOBS)}"
            )
        return kind

    def validate_parameters(self, parameters) -> dict:
        if not isinstance(parameters, dict):
            raise serializers.ValidationError("parameters must be a JSON object")
        return parameters


class JobRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    queryset = JobRun.objects.all()
    serializer_class = JobRunSerializer
    permission_classes = [IsAdminUser]

    def create(self, request, *args, **kwargs):
        """Queue a job and answer at once with 202; poll the job's URL for its progress."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = start_job(
            serializer.validated_data["kind"], serializer.validated_data.get("parameters") or {}, user=request.user
        )
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)


class ModelVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelVersion
        fields = ["id", "kind", "name", "base_model", "label_names", "training_data", "hyperparameters", "metrics",
                  "artifact_dir", "created_at"]  # fmt: skip


class ModelVersionViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = ModelVersion.objects.all()
    serializer_class = ModelVersionSerializer
    permission_classes = [IsAdminUser]
