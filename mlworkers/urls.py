from django.urls import path

from mlworkers import views

app_name = "mlworkers"
urlpatterns = [
    path("", views.model_version_list, name="model_version_list"),
    path("<int:version_id>/", views.model_version_detail, name="model_version_detail"),
]
