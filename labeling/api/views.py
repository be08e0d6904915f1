"""The labeling API (staff only): campaigns, their report, aggregated labels and workers, and the
same state changes as the dashboard's buttons. Reads and writes alike are for staff: the report
names workers and their marks."""

from django.conf import settings
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Dialogue
from jobs.runtime import start_job
from labeling import task_types
from labeling.api.serializers import (
    AcceptLabelSerializer,
    AggregatedLabelSerializer,
    ApprovedSerializer,
    CampaignReportSerializer,
    CampaignSerializer,
    CampaignStatusSerializer,
    JobQueuedSerializer,
    LabelSerializer,
    PairwiseCampaignSerializer,
    PaymentsRecordedSerializer,
    PublishSerializer,
    StudyReportSerializer,
    WorkerStatsSerializer,
    WorkerStatusSerializer,
)
from labeling.models import AggregatedLabel, Campaign, Worker
from labeling.pages.forms import candidate_dialogues
from labeling.platforms import get_platform
from labeling.reports.cache import shown_figures
from labeling.reports.campaign import accept_proposed_label
from labeling.reports.study import build_report
from labeling.services import liveness
from labeling.services.campaigns import (
    CampaignRefused,
    StatusChangeRefused,
    create_campaign,
    create_pairwise_campaign,
    set_campaign_status,
)
from labeling.services.payments import approve_submitted, record_payments
from labeling.services.workers import set_blocked
from labeling.work.hits import build_hits


class CampaignViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    # Every action takes `format`: the router also routes `<action>.json/`, and an action without
    # the argument answered such a URL with a 500 (an unknown suffix is DRF's 404).
    queryset = Campaign.objects.prefetch_related("labels").order_by("-created_at")
    serializer_class = CampaignSerializer
    permission_classes = [IsAdminUser]

    def perform_create(self, serializer):
        """Create the campaign and bundle its dialogues into HITs, or nothing at all."""
        data = dict(serializer.validated_data)
        dialogue_ids = data.pop("dialogue_ids", None)
        recent = data.pop("recent_dialogues", None)
        with transaction.atomic():
            try:
                campaign = create_campaign(data.pop("name"), created_by=self.request.user, **data)
            except CampaignRefused as refusal:
                raise ValidationError({refusal.field: [refusal.message]}) from refusal
            dialogues = _chosen_dialogues(dialogue_ids, recent, campaign.language)
            if dialogues:
                try:
                    build_hits(campaign, dialogues)
                except ValueError as error:  # quiz bank too small, no choices to offer ...
                    raise ValidationError({"dialogue_ids": [str(error)]}) from error
        serializer.instance = campaign

    @extend_schema(request=PairwiseCampaignSerializer, responses={201: CampaignSerializer})
    @action(detail=False, methods=["post"])
    def pairwise(self, request, format=None):
        """Create a pairwise (ACUTE-Eval) campaign and its HITs, or nothing at all."""
        serializer = PairwiseCampaignSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        try:
            campaign, _hits = create_pairwise_campaign(data.pop("name"), created_by=request.user, **data)
        except CampaignRefused as refusal:
            raise ValidationError({refusal.field: [refusal.message]}) from refusal
        return Response(CampaignSerializer(campaign).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=dict)
    @action(detail=True, methods=["get"])
    def results(self, request, pk=None, format=None):
        """The task type's results so far (pairwise: win rate of source a per question, position bias)."""
        campaign = self.get_object()
        return Response({"task_type": campaign.task_type, **task_types.of(campaign).summary(campaign)})

    @extend_schema(responses={200: CampaignReportSerializer, 202: dict})
    @action(detail=True, methods=["get"])
    def report(self, request, pk=None, format=None):
        """The campaign report as last computed (X-Figures-As-Of; X-Figures-Current: 0 while newer
        figures are computed); 202 while the first ones are."""
        return _figures_response(shown_figures(self.get_object(), "report"), lambda report: report)

    @extend_schema(responses=StudyReportSerializer)
    @action(detail=True, methods=["get"], url_path="study-report")
    def study_report(self, request, pk=None, format=None):
        """The study report (the study report page's JSON download); label campaigns only (404 otherwise)."""
        campaign = self.get_object()
        if not task_types.of(campaign).study_report:
            raise NotFound("the study report covers label campaigns; this campaign's figures are under results/")
        return Response(build_report(campaign).as_dict())

    @extend_schema(request=PublishSerializer, responses={202: JobQueuedSerializer})
    @action(detail=True, methods=["post"])
    def publish(self, request, pk=None, format=None):
        """Queue publishing on a platform (local: this site's accounts), after the dashboard's checks
        (the platform's minimum pay, every seat takeable); poll /api/jobs/<id>/. 400 names what is refused."""
        campaign = self.get_object()
        serializer = PublishSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        platform, base_url = serializer.validated_data["platform"], settings.SITE_URL or request.build_absolute_uri("/")
        refusals = publish_refusals(campaign, platform, base_url)
        if refusals:
            raise ValidationError({"platform": refusals})
        parameters = {"campaign_id": campaign.pk, "platform": platform, "base_url": base_url}
        job = start_job("labeling.platform_publish", parameters, user=request.user)
        return Response({"job": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses=AggregatedLabelSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="aggregated-labels")
    def aggregated_labels(self, request, pk=None, format=None):
        rows = (
            AggregatedLabel.objects.filter(campaign=self.get_object())
            .select_related("label", "turn")
            .order_by("dialogue_id", "turn_id")
        )
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(AggregatedLabelSerializer(page, many=True).data)

    @extend_schema(responses={200: WorkerStatsSerializer(many=True), 202: dict})
    @action(detail=True, methods=["get"])
    def workers(self, request, pk=None, format=None):
        """The report's worker table, as last computed (see `report`)."""
        return _figures_response(shown_figures(self.get_object(), "report"), lambda report: report["workers"])

    @extend_schema(request=None, responses={202: JobQueuedSerializer})
    @action(detail=True, methods=["post"])
    def aggregate(self, request, pk=None, format=None):
        """Queue the aggregation (tie-break HITs first when due); poll /api/jobs/<id>/."""
        job = start_job("labeling.aggregate_campaign", {"campaign_id": self.get_object().pk}, user=request.user)
        return Response({"job": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=CampaignStatusSerializer, responses=CampaignSerializer)
    @action(detail=True, methods=["post"], url_path="status")
    def set_status(self, request, pk=None, format=None):
        """Open, pause or close the campaign (draft → open ⇄ paused → closed)."""
        campaign = self.get_object()
        serializer = CampaignStatusSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            set_campaign_status(campaign, serializer.validated_data["status"])
        except StatusChangeRefused as refusal:
            raise ValidationError({"status": str(refusal)}) from refusal
        return Response(CampaignSerializer(campaign).data)

    @extend_schema(request=None, responses=ApprovedSerializer)
    @action(detail=True, methods=["post"], url_path="approve-submitted")
    def approve_submitted(self, request, pk=None, format=None):
        """Approve every submitted assignment whose worker is not blocked."""
        return Response({"approved": approve_submitted(self.get_object())})

    @extend_schema(request=None, responses=PaymentsRecordedSerializer)
    @action(detail=True, methods=["post"], url_path="record-payments")
    def record_payments(self, request, pk=None, format=None):
        return Response(record_payments(self.get_object()))


def publish_refusals(campaign: Campaign, platform: str, base_url: str) -> list[str]:
    """Why the campaign may not be published there now: what the dashboard's publish page checks
    (a closed campaign; a paid platform's minimum pay; seats a platform identity, one HIT each, cannot all take)."""
    if campaign.status == Campaign.CLOSED:
        return [f"campaign {campaign.pk} is closed; a closed campaign cannot be published"]
    if platform == "local":
        return []
    preview = get_platform(platform).cost_preview(campaign, base_url)
    needs = liveness.campaign_needs(campaign, workers=preview.seats, hits_per_worker=1) if preview.seats else None
    return list(preview.refusals) + (list(needs.problems) if needs else [])


def _figures_response(shown, pick) -> Response:
    """The stored figures with when they were computed; 202 (Retry-After) while the first are."""
    if shown is None:
        waiting = {"detail": "The campaign's figures are being computed; ask again in a few seconds."}
        return Response(waiting, status=202, headers={"Retry-After": "5"})
    headers = {"X-Figures-As-Of": shown.computed_at.isoformat(), "X-Figures-Current": "1" if shown.current else "0"}
    return Response(pick(shown.value), headers=headers)


def _chosen_dialogues(dialogue_ids: list[int] | None, recent: int | None, language: str) -> list[Dialogue]:
    if dialogue_ids:
        by_id = Dialogue.objects.in_bulk(dialogue_ids)
        return [by_id[pk] for pk in dialogue_ids]
    if recent:
        return list(candidate_dialogues(language)[:recent])
    return []


class WorkerStatusView(APIView):
    """Block or unblock a worker."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=WorkerStatusSerializer, responses=WorkerStatusSerializer)
    def post(self, request, pk: int):
        worker = get_object_or_404(Worker, pk=pk)
        serializer = WorkerStatusSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        blocked = serializer.validated_data["blocked"]
        new_status = set_blocked(worker, blocked, reason=serializer.validated_data.get("reason", ""))
        return Response({"id": worker.pk, "blocked": blocked, "status": new_status})


class AcceptLabelView(APIView):
    """Accept a label typed through "Other" into the taxonomy as kind "proposed"."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=AcceptLabelSerializer, responses={201: LabelSerializer})
    def post(self, request):
        serializer = AcceptLabelSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            label = accept_proposed_label(serializer.validated_data["text"])
        except ValueError as error:
            return Response({"text": [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(LabelSerializer(label).data, status=status.HTTP_201_CREATED)
