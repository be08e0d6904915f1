from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import IsAdminUser

from config.web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # the language switcher's set_language (a POST: it sets the language cookie, then goes back)
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("corpus/", include("annotation.pages.urls")),
    path("labeling/", include("labeling.urls")),
    path("jobs/", include("jobs.urls")),
    path("webhooks/", include("jobs.webhooks.urls")),
    path("models/", include("mlworkers.urls")),
    # the API's map is for staff, like the API itself
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[IsAdminUser]), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerView.as_view(url_name="api-schema", permission_classes=[IsAdminUser]),
        name="api-docs",
    ),
    path("api/", include("annotation.api.urls")),
    path("api/", include("labeling.api_urls")),
    path("api/", include("jobs.api_urls")),
    path("api/", include("mlworkers.api_urls")),
]
