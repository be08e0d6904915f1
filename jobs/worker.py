"""Worker-side recovery: every worker sweeps for stale jobs at start and every JOB_SWEEP_SECONDS,
and queues a message again for every queued job whenever it (re)connects to the broker.

Connected to Celery's `worker_ready` signal and the consumer's bootsteps (jobs.apps imports this
module), so it runs in worker processes only, whichever command started them.
"""

import logging
import threading

from celery import bootsteps
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

from config.celery import app

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


def republish_queued() -> None:
    """Queue a message again for every queued job. A broker can lose messages: the embedded one
    forgets a message a killed worker had fetched but not started, and Redis restarted without
    its data (no persistence, a new instance) forgets every message it held. Their jobs would stay
    queued forever. A duplicate message is harmless: only one claim succeeds."""
    from jobs.runtime import republish_queued_jobs

    try:
        republished = republish_queued_jobs()
    except Exception:  # the database may be away too; the next (re)connection tries again
        logger.exception("republishing queued jobs failed")
        return
    finally:
        connection.close()
    if republished:
        logger.warning("connected to the broker: queued jobs republished %s", republished)


class RepublishOnConnect(bootsteps.StartStopStep):
    """A step of the worker's consumer, which Celery starts when the worker starts and again each
    time its connection to the broker is lost and re-established (a broker restart): republish the
    queued jobs then, in a thread (the consumer goes on consuming meanwhile)."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, parent) -> None:
        threading.Thread(target=republish_queued, name="republish-queued", daemon=True).start()


app.steps["consumer"].add(RepublishOnConnect)


def _sweep_forever(every: float) -> None:
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
