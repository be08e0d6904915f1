from django.apps import AppConfig


class LabelingConfig(AppConfig):
    name = "labeling"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from labeling.task_types import installed  # noqa: F401  (registers the task types)
