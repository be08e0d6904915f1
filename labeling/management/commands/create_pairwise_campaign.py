"""Create a pairwise (ACUTE-Eval) campaign and its HITs from two sources or a CSV of pairs."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from labeling.services.campaigns import CampaignRefused, create_pairwise_campaign
from labeling.task_types.pairwise import DEFAULT_PAIR_COUNT, DEFAULT_QUESTIONS


class Command(BaseCommand):
    help = (
        "Create a pairwise campaign (draft) comparing two sources (subtitles, movie:<id>, source:<name>, "
        "model:<id>, ids:<id>,...) or the pairs of a CSV (dialogue_a,dialogue_b per line)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the campaign's name")
        parser.add_argument("--a", dest="source_a", default="", help="source a, e.g. source:botstalk")
        parser.add_argument("--b", dest="source_b", default="", help="source b, e.g. subtitles")
        parser.add_argument("--pairs-csv", type=Path, help="a CSV of dialogue id pairs instead of two sources")
        parser.add_argument("--count", type=int, default=DEFAULT_PAIR_COUNT, help="how many pairs to draw")
        parser.add_argument(
            "--seed", type=int, default=0, help="seed of the pair draw and of which side each source takes"
        )
        parser.add_argument("--language", default="en", help="the language of the dialogues drawn")
        parser.add_argument("--pairs-per-hit", type=int, default=10, help="pairs on one HIT")
        parser.add_argument(
            "--quiz-per-hit", type=int, default=2, help="quiz pairs (a dialogue against a degenerate copy) on one HIT"
        )
        parser.add_argument("--workers-per-hit", type=int, default=3, help="judges per HIT")
        parser.add_argument(
            "--quiz-pass-mark", type=int, default=2, help="quiz pairs a judge must get right for the bonus"
        )
        for question in DEFAULT_QUESTIONS:
            parser.add_argument(
                f"--{question['key']}-wording", default=question["wording"], help="the wording of this question"
            )

    def handle(self, *args, **options):
        text, csv_name = "", "pairs.csv"
        if options["pairs_csv"]:
            try:
                text = options["pairs_csv"].read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"{options['pairs_csv']}: {error}") from error
            csv_name = str(options["pairs_csv"])
        questions = [{**question, "wording": options[f"{question['key']}_wording"]} for question in DEFAULT_QUESTIONS]
        try:
            campaign, hits = create_pairwise_campaign(
                options["name"],
                source_a=options["source_a"],
                source_b=options["source_b"],
                pairs_csv=text,
                csv_name=csv_name,
                count=options["count"],
                seed=options["seed"],
                questions=questions,
                language=options["language"],
                dialogues_per_hit=options["pairs_per_hit"],
                quiz_per_hit=options["quiz_per_hit"],
                workers_per_hit=options["workers_per_hit"],
                quiz_pass_mark=options["quiz_pass_mark"],
            )
        except CampaignRefused as refusal:
            raise CommandError(str(refusal)) from refusal
        self.stdout.write(json.dumps({"campaign": campaign.pk, "hits": len(hits), "status": campaign.status}))
