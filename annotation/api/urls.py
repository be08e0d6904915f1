from django.urls import path

from annotation.api import views as api

urlpatterns = [
    path("exports/", api.ExportJobCreateView.as_view(), name="api-export-create"),
    path("exports/stream/", api.ExportStreamView.as_view(), name="api-export-stream"),
    path("exports/<int:pk>/", api.ExportJobDetailView.as_view(), name="api-export-detail"),
]
