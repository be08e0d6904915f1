"""python manage.py calibrate_expansion [--precision-margin 0.02] [--target-precision P] [--min-matches 20]
                                        [--split-seed 13] [--no-wait]

Queues `calibrate_expansion`: the label-transfer curve of ENCODER_MODEL on held-out crowd gold
(half the train/validation gold as seeds, half held out), stored with a ModelVersion of kind
encoder, and the threshold `sbert_expand` and `self_label_rounds` then use when theirs is empty.
"""

from django.core.management.base import BaseCommand

from jobs.commands import queue_and_follow


class Command(BaseCommand):
    help = "Calibrate the SBERT expansion threshold to the configured encoder on held-out gold."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--precision-margin", type=float, help="within this of the precision at 0.92 (0.02)")
        parser.add_argument("--target-precision", type=float, help="instead: at least this precision")
        parser.add_argument("--min-matches", type=int, help="a threshold fewer dialogues match decides nothing (20)")
        parser.add_argument("--split-seed", type=int, help="seed of the seeds / held-out halves of the gold")
        parser.add_argument("--no-wait", action="store_true", help="queue the job and return without waiting for it")

    def handle(self, *args, **options) -> None:
        keys = ("precision_margin", "target_precision", "min_matches", "split_seed")
        parameters = {key: options[key] for key in keys if options[key] is not None}
        job = queue_and_follow("calibrate_expansion", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            self.stdout.write(self.style.SUCCESS(f"done: {job.message}"))
