"""Labeling's Celery tasks that are not JobRuns, named here for Celery's autodiscovery: work a page
asks for while it reads, far too often (every reload of a live campaign's dashboard) to record a
JobRun each time, and which no one follows on the Jobs page (the page itself shows its state).

- labeling.refresh_report (labeling.reports.cache.refresh_report): compute and store a campaign's
  researcher figures; defined beside the code that queues it, so that no import runs in a circle.
"""

from labeling.reports.cache import refresh_report

__all__ = ["refresh_report"]
