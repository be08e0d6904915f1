"""The moved JobRun gets its own table name, a heartbeat, an attempt count and the cancelled status."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("jobs", "0001_move_jobrun_from_mlworkers"),
        ("mlworkers", "0002_jobrun_moved_to_jobs"),
    ]

    operations = [
        migrations.AlterModelTable(name="jobrun", table=None),
        migrations.AddField(
            model_name="jobrun",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0, help_text="times a worker has claimed this job"),
        ),
        migrations.AddField(
            model_name="jobrun",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, help_text="last sign of life of its worker", null=True),
        ),
        migrations.AlterField(
            model_name="jobrun",
            name="kind",
            field=models.CharField(help_text="a name registered with jobs.registry.register", max_length=64),
        ),
        migrations.AlterField(
            model_name="jobrun",
            name="status",
            field=models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("succeeded", "Succeeded"), ("failed", "Failed"), ("cancelled", "Cancelled")], default="queued", max_length=10),
        ),
        migrations.AddIndex(
            model_name="jobrun",
            index=models.Index(fields=["status", "heartbeat_at"], name="jobrun_status_heartbeat"),
        ),
    ]
