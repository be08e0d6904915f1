"""python manage.py run_worker [--queues default,ml] [--concurrency N] [--pool prefork|solo|threads]

Starts a Celery worker for the project's queues on whichever broker is configured: Redis (or any
CELERY_BROKER_URL), else the embedded filesystem broker under BROKER_DIR, which needs no server.
"""

from django.core.management.base import BaseCommand, CommandError

from jobs.registry import QUEUES


class Command(BaseCommand):
    help = "Run a Celery worker that executes the project's jobs."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--queues", default=",".join(QUEUES), help=f"comma-separated, from {', '.join(QUEUES)}")
        parser.add_argument("--concurrency", type=int, default=1, help="jobs run at once (default 1)")
        parser.add_argument(
            "--pool",
            default="prefork",
            choices=["prefork", "solo", "threads"],
            help="Celery's execution pool; solo runs one job at a time in the worker process",
        )
        parser.add_argument("--loglevel", default="INFO", help="the worker's log level")
        parser.add_argument("--hostname", default=None, help="worker name (default celery@<host>)")

    def handle(self, *args, **options) -> None:
        from config.celery import app

        queues = [q.strip() for q in options["queues"].split(",") if q.strip()]
        unknown = sorted(set(queues) - set(QUEUES))
        if unknown or not queues:
            raise CommandError(f"--queues: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(QUEUES)}")
        if options["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1")
        argv = ["worker", "-Q", ",".join(queues), "--concurrency", str(options["concurrency"]), "--pool",
                options["pool"], "--loglevel", options["loglevel"], "--without-gossip", "--without-mingle"]  # fmt: skip
        if options["hostname"]:
            argv += ["--hostname", options["hostname"]]
        app.worker_main(argv)
