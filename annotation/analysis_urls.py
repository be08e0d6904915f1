from django.urls import path

from annotation import views

urlpatterns = [
    path("analysis/", views.analysis, name="analysis"),
]
