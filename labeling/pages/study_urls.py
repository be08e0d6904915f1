"""The study flow's pages (labeling.pages.study), in the `labeling` namespace under /labeling/."""

from django.urls import path

from labeling.pages import study as views

urlpatterns = [
    path("study/<int:pk>/", views.entry, name="study_entry"),
    path("study/<int:pk>/consent/", views.consent, name="study_consent"),
    path("study/<int:pk>/declined/", views.declined, name="study_declined"),
    path("study/<int:pk>/instructions/", views.instructions, name="study_instructions"),
    path("study/<int:pk>/practice/", views.practice, name="study_practice"),
    path("study/<int:pk>/begin/", views.begin, name="study_begin"),
    path("study/<int:pk>/survey/", views.survey, name="study_survey"),
]
