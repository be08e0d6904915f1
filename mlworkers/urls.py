from django.urls import path

from mlworkers import views

app_name = "mlworkers"
urlpatterns = [
    path("", views.job_list, name="job_list"),
    path("start/", views.job_start, name="job_start"),
    path("<int:job_id>/", views.job_detail, name="job_detail"),
    path("<int:job_id>/status/", views.job_status, name="job_status"),
    path("models/<int:version_id>/", views.model_version_detail, name="model_version_detail"),
]
