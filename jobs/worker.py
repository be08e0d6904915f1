"""Worker-side recovery: every worker sweeps for stale jobs at start and every JOB_SWEEP_SECONDS.

Connected to Celery's `worker_ready` signal (jobs.apps imports this module), so it runs in worker
processes only, whichever command started them.
"""

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)
_stop = threading.Event()


def sweep_once() -> None:
    from jobs.runtime import requeue_stale_jobs

    try:
        outcome = requeue_stale_jobs()
    except Exception:  # the database may be briefly away; the next sweep tries again
        logger.exception("stale-job sweep failed")
        return
    finally:
        connection.close()
    if outcome["requeued"] or outcome["failed"]:
        logger.warning("stale jobs: requeued %s, failed %s", outcome["requeued"], outcome["failed"])


def republish_on_embedded_broker() -> None:
    from jobs.runtime import republish_queued_jobs

    if not str(settings.CELERY_BROKER_URL).startswith("filesystem://"):
        return  # Redis redelivers an unacknowledged message itself
    try:
        republished = republish_queued_jobs()
    except Exception:
        logger.exception("republishing queued jobs failed")
        return
    finally:
        connection.close()
    if republished:
        logger.warning("queued jobs republished at start: %s", republished)


def _sweep_forever(every: float) -> None:
    republish_on_embedded_broker()
    sweep_once()
    while not _stop.wait(every):
        sweep_once()


@worker_ready.connect
def start_sweeper(**_kwargs) -> None:
    every = float(getattr(settings, "JOB_SWEEP_SECONDS", 30))
    _stop.clear()
    threading.Thread(target=_sweep_forever, args=(every,), name="stale-job-sweeper", daemon=True).start()


@worker_shutdown.connect
def stop_sweeper(**_kwargs) -> None:
    _stop.set()
