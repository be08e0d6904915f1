"""No Celery task here: the one task that runs every job is jobs.tasks.run_job_task."""
