from django.urls import path

from labeling.pages import annotator as views
from labeling.pages import qualification as qualification_views

urlpatterns = [
    path("", views.worker_home, name="worker_home"),
    path("instructions/", views.instructions, name="instructions"),
    path("claim/", views.claim, name="claim"),
    path("assignments/<int:pk>/", views.assignment_detail, name="assignment_detail"),
    path("assignments/<int:pk>/items/<int:position>/", views.assignment_item, name="assignment_item"),
    path("assignments/<int:pk>/items/<int:position>/answer/", views.answer_item, name="answer_item"),
    path("assignments/<int:pk>/items/<int:position>/check/", qualification_views.quiz_check, name="quiz_check"),
    path("assignments/<int:pk>/review/", views.assignment_review, name="assignment_review"),
    path("assignments/<int:pk>/submit/", views.submit, name="assignment_submit"),
    path("assignments/<int:pk>/feedback/", views.assignment_feedback, name="assignment_feedback"),
    path("assignments/<int:pk>/done/", views.assignment_done, name="assignment_done"),
]
