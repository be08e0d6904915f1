"""The API of labeling's audit trail: a campaign's editable settings (each change recorded with
its reason) and a campaign's audit log. Staff only, as the rest of the researcher's API."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import AuditEntry
from labeling.models import Campaign
from labeling.services.campaigns import CampaignRefused, change_campaign_settings

LOG_LIMIT = 500


class CampaignSettingsSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(allow_blank=True, required=False)
    adjudicate_posterior_below = serializers.FloatField(min_value=0.0, max_value=1.0, allow_null=True, required=False)
    study_flow = serializers.JSONField(required=False, help_text="consent, instructions, practice, survey (JSON)")
    reason = serializers.CharField(allow_blank=True, required=False, default="")


class AuditEntrySerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEntry
        fields = ["id", "at", "kind", "actor_kind", "actor", "on_behalf_of", "target_type", "target_id"]
        fields += ["campaign_id", "worker_id", "turn_id", "old", "new", "reason"]


class CampaignSettingsView(APIView):
    """Change a campaign's editable settings (name, description, adjudicate_posterior_below, study_flow)."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=CampaignSettingsSerializer, responses={200: CampaignSettingsSerializer})
    def patch(self, request, pk: int):
        campaign = get_object_or_404(Campaign, pk=pk)
        serializer = CampaignSettingsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changes = dict(serializer.validated_data)
        reason = changes.pop("reason", "")
        try:
            changed = change_campaign_settings(campaign, changes, reason)
        except CampaignRefused as refused:
            return Response({refused.field: [refused.message]}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"changed": changed, **{name: getattr(campaign, name) for name in changes}})


class CampaignAuditView(APIView):
    """The campaign's audit log, newest first (at most 500 entries; `kind` filters)."""

    permission_classes = [IsAdminUser]

    @extend_schema(responses=AuditEntrySerializer(many=True))
    def get(self, request, pk: int):
        campaign = get_object_or_404(Campaign, pk=pk)
        entries = AuditEntry.objects.for_campaign(campaign.pk)
        if request.query_params.get("kind"):
            entries = entries.filter(kind=request.query_params["kind"])
        return Response(AuditEntrySerializer(entries[:LOG_LIMIT], many=True).data)
