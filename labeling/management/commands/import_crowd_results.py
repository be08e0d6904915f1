import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from labeling.services.importers.edos import import_edos_mturk
from labeling.services.importers.edos_format import EdosFormatError

FORMATS = {"edos-mturk": import_edos_mturk}


class Command(BaseCommand):
    help = "Import a crowd-results file as a closed campaign with its aggregated labels (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="the crowd-results CSV")
        parser.add_argument(
            "--format",
            choices=sorted(FORMATS),
            default="edos-mturk",
            help="the file's layout (edos-mturk: EDOS's MTurk_groundtruth_labels_9K.csv)",
        )
        parser.add_argument("--name", default="", help="campaign name (default: from the file name)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the figures as one JSON object")

    def handle(self, *args, file: Path, format: str, name: str, as_json: bool, **options):
        try:
            result = FORMATS[format](file, name=name)
        except EdosFormatError as error:
            raise CommandError(str(error))
        except IntegrityError as error:  # another process wrote the same dialogue or file meanwhile
            raise CommandError(f"{file}: nothing saved, a concurrent write collided ({error}); run it again")
        stored = result["stored"]
        if as_json:
            self.stdout.write(json.dumps(result))
            return
        self.stdout.write(
            f"{result['dialogues']} dialogues, {result['majority']} with a 2-of-3 majority "
            f"({result['majority_rate']:.1%}), {result['majority_normalized']} once typed labels are "
            f"normalised; Fleiss' kappa {result['fleiss_kappa']}; {result['other_answers']} answers "
            f"through Other. Stored as campaign {stored['campaign']}: {stored['dialogues_created']} new "
            f"dialogues, {stored['aggregated']['majority']} majority labels (typed labels normalised), "
            f"{stored['aggregated']['turn_labels']} crowd turn labels."
        )
