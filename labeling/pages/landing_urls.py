"""Crowd-platform landing pages (labeling.pages.landings), in the `labeling` namespace."""

from django.urls import path

from labeling.pages import landings as platform_views

urlpatterns = [
    path("platform/mturk/", platform_views.mturk_landing, name="platform_mturk"),
    path("platform/prolific/", platform_views.prolific_landing, name="platform_prolific"),
    path("platform/prolific/events/", platform_views.prolific_event, name="prolific_events"),
    path("platform/return/<int:assignment_id>/", platform_views.platform_return, name="platform_return"),
]
