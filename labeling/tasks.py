"""Labeling's Celery tasks that are not JobRuns: work a page asks for while it reads, far too often
(every reload of a live campaign's dashboard) to record a JobRun each time, and which no one
follows on the Jobs page (the page itself shows its state)."""

from celery import shared_task

from labeling import report_cache


# acks_late: the work is idempotent (it stores the figures of the state it reads, under its
# fingerprint) and a copy of it that finds another running returns at once
@shared_task(name="labeling.refresh_report", acks_late=True, ignore_result=True)
def refresh_report(campaign_id: int) -> dict:
    """Compute and store a campaign's researcher figures (labeling.report_cache.refresh_figures)."""
    return report_cache.refresh_figures(campaign_id)
