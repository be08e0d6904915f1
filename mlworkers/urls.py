from django.urls import path

from mlworkers import views

app_name = "mlworkers"
urlpatterns = [
    path("", views.job_list, name="job_list"),
]
