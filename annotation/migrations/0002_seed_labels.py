from django.db import migrations

# A frozen copy would be purer, but the taxonomy module is pure data kept stable on purpose:
# renaming a core label needs a migration of its own anyway.
from annotation.taxonomy import TAXONOMY


def seed_labels(apps, schema_editor):
    Label = apps.get_model("annotation", "Label")
    for position, spec in enumerate(TAXONOMY):
        Label.objects.update_or_create(
            name=spec.name,
            defaults={
                "kind": spec.kind,
                "description": spec.description,
                "example_1": spec.examples[0],
                "example_2": spec.examples[1],
                "position": position,
            },
        )


def unseed_labels(apps, schema_editor):
    Label = apps.get_model("annotation", "Label")
    Label.objects.filter(name__in=[spec.name for spec in TAXONOMY]).delete()


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial")]
    operations = [migrations.RunPython(seed_labels, unseed_labels)]
