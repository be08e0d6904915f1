"""Thin Celery wrappers: ids in, a small dict out; the work lives in plain functions."""

from celery import shared_task

from mlworkers import jobs


@shared_task(name="mlworkers.tasks.run_job_task")
def run_job_task(job_id: int) -> dict:
    return jobs.run_job(job_id)
