"""JobRun moves from mlworkers to jobs. State only: the table mlworkers_jobrun and its rows stay
as they are; the next migration renames the table and adds the new columns."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("mlworkers", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="JobRun",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(help_text="a name registered in mlworkers.jobs", max_length=64)),
                        ("parameters", models.JSONField(blank=True, default=dict)),
                        ("status", models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("succeeded", "Succeeded"), ("failed", "Failed")], default="queued", max_length=10)),
                        ("progress_done", models.PositiveBigIntegerField(default=0)),
                        ("progress_total", models.PositiveBigIntegerField(default=0)),
                        ("message", models.CharField(blank=True, max_length=300)),
                        ("result", models.JSONField(blank=True, default=dict)),
                        ("error", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={"ordering": ["-created_at"], "db_table": "mlworkers_jobrun"},
                ),
            ],
            database_operations=[],
        ),
    ]
