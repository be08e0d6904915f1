from django.urls import path

from annotation.pages import analysis as views

urlpatterns = [
    path("analysis/", views.analysis, name="analysis"),
    path("analysis/compare/", views.analysis_compare, name="analysis_compare"),
    path("analysis/flows/", views.analysis_flows, name="analysis_flows"),
    path("analysis/flows.html", views.analysis_flows_html, name="analysis_flows_html"),
    path("analysis/gaps/", views.analysis_gaps, name="analysis_gaps"),
    path("analysis/skills/", views.analysis_skills, name="analysis_skills"),
    path("analysis/examples/", views.analysis_examples, name="analysis_examples"),
    path("analysis/evaluation/", views.analysis_evaluation, name="analysis_evaluation"),
    path("analysis/dataset-utility/", views.analysis_utility, name="analysis_utility"),
    path("analysis/exports/", views.analysis_exports, name="analysis_exports"),
    path("analysis/exports/<int:pk>/status/", views.analysis_export_status, name="analysis_export_status"),
    path("analysis/exports/<int:pk>/download/", views.analysis_export_download, name="analysis_export_download"),
]
