"""Staff-only export API: stream an export, start an export job, read a job's status."""

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.serializers import ExportJobRequestSerializer, ExportJobSerializer, StreamExportSerializer
from annotation.export.query import ExportError, ExportFilters, check_request, stream_export
from annotation.export.writers import CONTENT_TYPES
from annotation.pages.analysis import start_export
from jobs.models import JobRun


def _filters(data: dict) -> ExportFilters:
    return ExportFilters(
        label=data.get("label") or None,
        min_confidence=data.get("min_confidence"),
        source=data.get("source") or None,
        split=data.get("split") or None,
        model_version=data.get("model_version"),
    )


class ExportStreamView(APIView):
    """GET /api/exports/stream/?kind=gold&file_format=csv&label=...: the export, streamed row by row."""

    permission_classes = [IsAdminUser]

    @extend_schema(parameters=[StreamExportSerializer], responses={200: OpenApiResponse(description="CSV or JSONL")})
    def get(self, request: Request):
        params = StreamExportSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        kind, fmt = data["kind"], data["file_format"]
        try:
            filters = check_request(kind, fmt, _filters(data), data["layout"])
        except ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        chunks = stream_export(kind, fmt, filters, data["layout"])
        response = StreamingHttpResponse(chunks, content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{kind}.{fmt}"'
        return response


class ExportJobCreateView(APIView):
    """POST /api/exports/ {kind, file_format, filters...}: queue an "export_dataset" job, return its id."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=ExportJobRequestSerializer, responses={202: ExportJobSerializer})
    def post(self, request: Request) -> Response:
        params = ExportJobRequestSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        data = dict(params.validated_data)
        data["format"] = data.pop("file_format")
        try:
            job = start_export(data, request.user)
        except ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        body = ExportJobSerializer(job, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


class ExportJobDetailView(APIView):
    """GET /api/exports/<id>/: status, progress and, once finished, the download link."""

    permission_classes = [IsAdminUser]

    @extend_schema(responses={200: ExportJobSerializer})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(JobRun, pk=pk, kind="export_dataset")
        return Response(ExportJobSerializer(job, context={"request": request}).data)
