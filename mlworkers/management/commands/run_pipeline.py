"""python manage.py run_pipeline [--steps weak_train,weak_apply,...] [--campaign-name NAME] [--no-wait] ...

Queues the model-in-the-loop chain as one `run_pipeline` job for a worker (each step is recorded as
its own JobRun, so the Jobs page shows them) and follows its progress, or returns at once with
--no-wait. Steps that need crowd gold labels are skipped, with a note, until a campaign has been
aggregated.
"""

from django.core.management.base import BaseCommand, CommandError

from annotation.papers import PREFILTER_CONFIDENCE
from jobs.commands import queue_and_follow
from mlworkers.chain.pipeline import STEPS


class Command(BaseCommand):
    help = "Queue the model-in-the-loop pipeline for a worker and follow it: " + " -> ".join(STEPS)

    def add_arguments(self, parser):
        parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, from: {', '.join(STEPS)}")
        parser.add_argument("--weak-data", dest="data_path", help="CSV or JSONL of text,label (default: the seed set)")
        parser.add_argument("--weak-model", dest="model_name", help="encoder of the weak labeler (default: settings)")
        parser.add_argument("--fine-tune", action="store_true", help="fine-tune the weak labeler's encoder too")
        parser.add_argument("--campaign-name", help="create this campaign and build its HITs from the candidates")
        parser.add_argument("--campaign-id", type=int, help="build the HITs into this existing campaign")
        parser.add_argument(
            "--min-confidence", type=float, help=f"weak prefilter threshold (default {PREFILTER_CONFIDENCE:g})"
        )
        parser.add_argument("--per-label", type=int, help="candidates kept per label (default 250)")
        parser.add_argument("--epochs", type=int, help="epochs of the dialogue classifier in the rounds")
        parser.add_argument("--no-wait", action="store_true", help="queue the job and return")

    def handle(self, *args, **options):
        steps = [s.strip() for s in options["steps"].split(",") if s.strip()]
        unknown = [s for s in steps if s not in STEPS]
        if unknown:
            raise CommandError(f"unknown steps {', '.join(unknown)}; choose from {', '.join(STEPS)}")
        keys = ("data_path", "model_name", "campaign_name", "campaign_id", "min_confidence", "per_label", "epochs")
        parameters = {key: options[key] for key in keys if options.get(key) is not None}
        parameters.update(steps=steps, fine_tune=options["fine_tune"])
        parameters.setdefault("campaign_name", None)
        job = queue_and_follow("run_pipeline", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            for line in job.result.get("log", []):
                self.stdout.write(line)
            self.stdout.write(self.style.SUCCESS(f"Done: {len(job.result.get('jobs', []))} step job(s) run."))
