"""The jobs API (staff only): list and read jobs, start one (202 + its id; 400 naming the bad
parameter), cancel and retry. Each kind's parameter schema appears in the OpenAPI document."""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response

from jobs import registry
from jobs.models import JobRun
from jobs.runtime import cancel_job, retry_job, start_job


class JobRunSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    parameters = serializers.JSONField(required=False, default=dict)

    class Meta:
        model = JobRun
        fields = [
            "id", "kind", "parameters", "status", "attempts", "heartbeat_at", "progress_done", "progress_total",
            "percent", "message", "result", "error", "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = [f for f in fields if f not in ("kind", "parameters")]

    def validate_kind(self, kind: str) -> str:
        startable = [spec.kind for spec in registry.startable()]
        if kind not in startable:
            raise serializers.ValidationError(f"{kind!r} is not a startable job; choose one of {', '.join(startable)}")
        return kind

    def validate(self, data: dict) -> dict:
        try:
            data["parameters"] = registry.get(data["kind"]).validate(data.get("parameters"))
        except registry.InvalidParameters as error:
            raise serializers.ValidationError({"parameters": error.errors}) from None
        return data


def start_request_schema() -> dict:
    """The start request as OpenAPI: one alternative per startable kind, with its parameters."""
    alternatives = []
    for spec in registry.startable():
        parameters = spec.parameters.model_json_schema()
        parameters.pop("title", None)
        alternatives.append({
            "type": "object", "title": spec.kind, "description": spec.description, "required": ["kind"],
            "properties": {"kind": {"type": "string", "enum": [spec.kind]}, "parameters": parameters},
        })  # fmt: skip
    return {"oneOf": alternatives}


class JobRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    queryset = JobRun.objects.all()
    serializer_class = JobRunSerializer
    permission_classes = [IsAdminUser]

    @extend_schema(request={"application/json": start_request_schema()}, responses={202: JobRunSerializer})
    def create(self, request, *args, **kwargs):
        """Queue a job and answer at once with 202; poll the job's URL for its progress."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        job = start_job(data["kind"], data["parameters"], user=request.user)
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={200: JobRunSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None, format=None):
        """Cancel a queued or running job (a running one stops after its current chunk); 409 if finished."""
        job = self.get_object()
        if not cancel_job(job, by=request.user.get_username()):
            return Response({"detail": f"job {job.pk} is {job.status}"}, status=status.HTTP_409_CONFLICT)
        job.refresh_from_db()
        return Response(self.get_serializer(job).data)

    @extend_schema(request=None, responses={202: JobRunSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None, format=None):
        """Queue a failed or cancelled job again (resumable jobs skip finished work); 409 otherwise."""
        job = self.get_object()
        if not retry_job(job):
            return Response(
                {"detail": f"job {job.pk} is {job.status}: only failed or cancelled jobs can be retried"},
                status=status.HTTP_409_CONFLICT,
            )
        job.refresh_from_db()
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)
