from django.apps import AppConfig


class LabelingConfig(AppConfig):
    name = "labeling"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.export import card
        from labeling.reports import dataset_figures
        from labeling.task_types import installed  # noqa: F401  (registers the task types)

        card.register_figures(dataset_figures.card_figures)  # the dataset card's agreement figures
