from django.urls import path
from rest_framework.routers import DefaultRouter

from labeling.api import audit as audit_api
from labeling.api import views as api

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("campaigns", api.CampaignViewSet, basename="campaign")

urlpatterns = [
    *router.urls,
    path("workers/<int:pk>/status/", api.WorkerStatusView.as_view(), name="api-worker-status"),
    path("labels/accept/", api.AcceptLabelView.as_view(), name="api-label-accept"),
    path("campaigns/<int:pk>/settings/", audit_api.CampaignSettingsView.as_view(), name="api-campaign-settings"),
    path("campaigns/<int:pk>/audit/", audit_api.CampaignAuditView.as_view(), name="api-campaign-audit"),
]
