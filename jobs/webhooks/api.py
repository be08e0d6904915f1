"""The webhooks API (staff only): endpoints (create answers the secret once, 201), and the
deliveries with their attempts, each replayable (202; 409 while its own retries go on)."""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response

from jobs.webhooks import delivery as deliveries
from jobs.webhooks.endpoints import EndpointRefused, change_endpoint, create_endpoint, delete_endpoint
from jobs.webhooks.models import EVENT_KINDS, WebhookAttempt, WebhookDelivery, WebhookEndpoint


class WebhookEndpointSerializer(serializers.ModelSerializer):
    kinds = serializers.ListField(child=serializers.ChoiceField(choices=list(EVENT_KINDS)), allow_empty=False)

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "kinds", "description", "active", "created_at"]
        read_only_fields = ["id", "created_at"]


class CreatedEndpointSerializer(WebhookEndpointSerializer):
    secret = serializers.CharField(read_only=True, help_text="the signing secret: in this answer only, never again")

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret"]


class WebhookAttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookAttempt
        fields = ["number", "by_hand", "started_at", "duration_ms", "status_code", "error"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.event_id", read_only=True)
    kind = serializers.CharField(source="event.kind", read_only=True)
    data = serializers.JSONField(source="event.data", read_only=True)
    attempt_log = WebhookAttemptSerializer(many=True, read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = ["id", "endpoint", "event_id", "kind", "data", "status", "attempts", "attempt_limit", "next_attempt_at",
                  "created_at", "attempt_log"]  # fmt: skip
        read_only_fields = fields


def _refused(error: EndpointRefused) -> Response:
    return Response({error.field: [error.message]}, status=status.HTTP_400_BAD_REQUEST)


class WebhookEndpointViewSet(
    mixins.CreateModelMixin, mixins.UpdateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet
):
    queryset = WebhookEndpoint.objects.all()
    serializer_class = WebhookEndpointSerializer
    permission_classes = [IsAdminUser]
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    @extend_schema(responses={201: CreatedEndpointSerializer})
    def create(self, request, *args, **kwargs):
        """Register an endpoint; the answer carries its signing secret, shown this once."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            endpoint, secret = create_endpoint(
                data["url"], data["kinds"], description=data.get("description", ""), created_by=request.user
            )
        except EndpointRefused as error:
            return _refused(error)
        endpoint.secret = secret
        return Response(CreatedEndpointSerializer(endpoint).data, status=status.HTTP_201_CREATED)

    def update(self, request, *args, **kwargs):
        """Change an endpoint's event kinds or switch it on or off (its URL and secret stay)."""
        endpoint = self.get_object()
        serializer = self.get_serializer(endpoint, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        if "url" in request.data:
            return Response({"url": ["register a new endpoint for a new URL"]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            change_endpoint(
                endpoint, kinds=serializer.validated_data.get("kinds"), active=serializer.validated_data.get("active")
            )
        except EndpointRefused as error:
            return _refused(error)
        return Response(self.get_serializer(endpoint).data)

    def perform_destroy(self, instance):
        delete_endpoint(instance)


class WebhookDeliveryViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = WebhookDelivery.objects.select_related("event").prefetch_related("attempt_log")
    serializer_class = WebhookDeliverySerializer
    permission_classes = [IsAdminUser]

    @extend_schema(request=None, responses={202: WebhookDeliverySerializer, 409: None})
    @action(detail=True, methods=["post"])
    def replay(self, request, pk=None, format=None):
        """Queue one more attempt of a finished delivery; 409 while its own retries are not over."""
        row = self.get_object()
        if not deliveries.replay(row):
            return Response({"detail": f"delivery {row.pk} is {row.status}"}, status=status.HTTP_409_CONFLICT)
        row.refresh_from_db()
        return Response(self.get_serializer(row).data, status=status.HTTP_202_ACCEPTED)
