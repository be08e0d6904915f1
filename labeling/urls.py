from django.urls import path

from labeling import views

app_name = "labeling"
urlpatterns = [
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("", views.worker_home, name="worker_home"),
]
