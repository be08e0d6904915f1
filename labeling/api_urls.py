from django.urls import path
from rest_framework.routers import DefaultRouter

from labeling import api

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("campaigns", api.CampaignViewSet, basename="campaign")

urlpatterns = [
    *router.urls,
    path("workers/<int:pk>/status/", api.WorkerStatusView.as_view(), name="api-worker-status"),
    path("labels/accept/", api.AcceptLabelView.as_view(), name="api-label-accept"),
]
