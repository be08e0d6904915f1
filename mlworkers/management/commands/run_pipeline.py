"""python manage.py run_pipeline [--steps weak_train,weak_apply,...] [--campaign-name NAME] ...

Runs the model-in-the-loop chain in this process, each step recorded as its own JobRun (so the
jobs page shows them), printing each step as it finishes. Steps that need crowd gold labels are
skipped, with a note, until a campaign has been aggregated.
"""

from django.core.management.base import BaseCommand, CommandError

from mlworkers.pipeline import STEPS, run_steps


class Command(BaseCommand):
    help = "Run the model-in-the-loop pipeline: " + " -> ".join(STEPS)

    def add_arguments(self, parser):
        parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, from: {', '.join(STEPS)}")
        parser.add_argument("--weak-data", dest="data_path", help="CSV or JSONL of text,label (default: the seed set)")
        parser.add_argument("--weak-model", dest="model_name", help="encoder of the weak labeler (default: settings)")
        parser.add_argument("--fine-tune", action="store_true", help="fine-tune the weak labeler's encoder too")
        parser.add_argument("--campaign-name", help="create this campaign and build its HITs from the candidates")
        parser.add_argument("--campaign-id", type=int, help="build the HITs into this existing campaign")
        parser.add_argument("--min-confidence", type=float, help="weak prefilter threshold (default 0.9)")
        parser.add_argument("--per-label", type=int, help="candidates kept per label (default 250)")
        parser.add_argument("--epochs", type=int, help="epochs of the dialogue classifier in the rounds")

    def handle(self, *args, **options):
        steps = [s.strip() for s in options["steps"].split(",") if s.strip()]
        unknown = [s for s in steps if s not in STEPS]
        if unknown:
            raise CommandError(f"unknown steps {', '.join(unknown)}; choose from {', '.join(STEPS)}")
        keys = ("data_path", "model_name", "fine_tune", "campaign_name", "campaign_id", "min_confidence", "per_label")
        step_options = {key: options[key] for key in keys + ("epochs",) if options.get(key) is not None}
        self.stdout.write(f"Running {', '.join(steps)}")
        try:
            jobs = run_steps(steps, step_options, stdout=self.stdout)
        except Exception as error:
            raise CommandError(f"pipeline stopped: {type(error).__name__}: {error}") from error
        self.stdout.write(self.style.SUCCESS(f"Done: {len(jobs)} job(s) run."))
