"""JobRun now belongs to the jobs app (jobs.0001 adopts the same table): forget it here, state only."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("mlworkers", "0001_initial"),
        ("jobs", "0001_move_jobrun_from_mlworkers"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="JobRun")], database_operations=[]),
    ]
