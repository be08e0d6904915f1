from django.urls import path

from labeling import views

urlpatterns = [
    path("", views.worker_home, name="worker_home"),
]
