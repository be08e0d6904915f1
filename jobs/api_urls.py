from rest_framework.routers import DefaultRouter

from jobs.api import JobRunViewSet
from jobs.webhooks.api import WebhookDeliveryViewSet, WebhookEndpointViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("jobs", JobRunViewSet, basename="jobrun")
router.register("webhooks", WebhookEndpointViewSet, basename="webhook")
router.register("webhook-deliveries", WebhookDeliveryViewSet, basename="webhook-delivery")

urlpatterns = router.urls
