"""python manage.py dataset_utility [--pretrain raw] [--finetune gold,label:Joyful] [--test-sets pairs:FILE] [--no-wait] ...

Queues the `dataset_utility` job (the EDOS paper's Table 7) for a worker on the `ml` queue and
follows it. Every flag is a parameter of the job (`--max-epochs 3`, `--beam-size 8`, ...); the dataset lists take commas
(`--finetune gold,label:Joyful`). The stored result
names the command that reproduces it.
"""

from django.core.management.base import BaseCommand

from jobs.commands import queue_and_follow
from mlworkers.generation.parameters import DatasetUtilityParameters


class Command(BaseCommand):
    help = "Pre-train and fine-tune dialogue models and score them (PPL, Distinct-1/2, SES): Table 7."

    def add_arguments(self, parser) -> None:
        for name, field in DatasetUtilityParameters.model_fields.items():
            flag = "--" + name.replace("_", "-")
            text = f"{field.title or name}: {field.description or ''} (default {field.default})"
            parser.add_argument(flag, dest=name, help=text.replace("%", "%%"))
        parser.add_argument("--no-wait", action="store_true", help="queue the job and return")

    def handle(self, *args, **options) -> None:
        fields = DatasetUtilityParameters.model_fields
        parameters = {name: options[name] for name in fields if options.get(name) is not None}
        job = queue_and_follow("dataset_utility", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            for row in job.result.get("table", []):
                cells = " ".join(f"{key}={row[key]}" for key in ("ppl", "d1", "d2", "ses"))
                self.stdout.write(f"row={row['row']} test={row['test']} {cells}")
            self.stdout.write(self.style.SUCCESS(f"stored as model version {job.result.get('model_version')}"))
