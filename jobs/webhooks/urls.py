from django.urls import path

from jobs.webhooks import views

app_name = "webhooks"
urlpatterns = [
    path("", views.endpoint_list, name="endpoint_list"),
    path("<int:endpoint_id>/", views.endpoint_detail, name="endpoint_detail"),
    path("<int:endpoint_id>/switch/", views.endpoint_switch, name="endpoint_switch"),
    path("<int:endpoint_id>/delete/", views.endpoint_delete, name="endpoint_delete"),
    path("deliveries/", views.delivery_list, name="delivery_list"),
    path("deliveries/<int:delivery_id>/replay/", views.delivery_replay, name="delivery_replay"),
]
