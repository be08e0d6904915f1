from django.apps import AppConfig


class MlworkersConfig(AppConfig):
    name = "mlworkers"
    default_auto_field = "django.db.models.BigAutoField"
