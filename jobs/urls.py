from django.urls import path

from jobs import views

app_name = "jobs"
urlpatterns = [
    path("", views.job_list, name="job_list"),
    path("start/", views.job_start, name="job_start"),
    path("<int:job_id>/", views.job_detail, name="job_detail"),
    path("<int:job_id>/status/", views.job_status, name="job_status"),
    path("<int:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("<int:job_id>/retry/", views.job_retry, name="job_retry"),
]
