"""Moving JobRun from mlworkers to jobs keeps the rows of an existing database."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("mlworkers", "0001_initial"), ("jobs", None)]


@pytest.mark.django_db(transaction=True)
def test_existing_job_rows_survive_the_move_to_the_jobs_app():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state([BEFORE[0]]).apps.get_model("mlworkers", "JobRun")
    old.objects.create(kind="weak_apply", status="succeeded", parameters={"chunk_size": 7}, result={"predicted": 3})

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from jobs.models import JobRun

    moved = JobRun.objects.get()
    assert (moved.kind, moved.status, moved.parameters, moved.result) == (
        "weak_apply", "succeeded", {"chunk_size": 7}, {"predicted": 3},
    )  # fmt: skip
    assert moved.attempts == 0 and moved.heartbeat_at is None
    assert JobRun._meta.db_table == "jobs_jobrun" and "mlworkers_jobrun" not in connection.introspection.table_names()
    JobRun.objects.create(kind="gold_split")  # the id sequence carried over
    assert JobRun.objects.count() == 2
