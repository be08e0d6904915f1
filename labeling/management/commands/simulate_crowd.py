"""Simulated workers take a campaign's HITs through the annotator services (for the demo).

    python manage.py simulate_crowd CAMPAIGN_ID [--truth media/demo/subtitles/truth.jsonl] [--leave-open 2]

Six workers (three careful, two noisy, one spammer; labeling.platforms.simulated_crowd.DEFAULT_CROWD) fill
every HIT but the last `--leave-open`, which stay open for people. A rerun adds nothing. Without
--truth (a corpus of your own) they know only the quiz answers: on a work screen each gives the
first suggestion, so a first campaign can be tried end to end before people are invited.
"""

from pathlib import Path

from django.core.management import BaseCommand, CommandError

from labeling.models import Campaign
from labeling.platforms.simulated_crowd import crowd_figures, read_truth, simulate_campaign


class Command(BaseCommand):
    help = "Let simulated workers of known reliability answer a campaign's HITs (demo)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument(
            "--truth",
            help="truth.jsonl of a generated corpus (the demo's); without it: the first suggestion on work screens",
        )
        parser.add_argument("--leave-open", type=int, default=2, help="HITs left to people (default 2)")
        parser.add_argument("--seed", type=int, default=15, help="seed of the simulated workers' answers and timings")

    def handle(self, *args, **options) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign']}")
        if campaign.status != Campaign.OPEN:
            raise CommandError(f"campaign {campaign.pk} is {campaign.status}: open it first")
        if options["leave_open"] < 0:
            raise CommandError("--leave-open must be 0 or more")
        truth = self._truth(options["truth"])
        report = simulate_campaign(campaign, truth, leave_open=options["leave_open"], seed=options["seed"])
        self.stdout.write(
            f"simulated crowd on {campaign.name!r}: {report.hits} HITs, {report.assignments} assignments, "
            f"{report.responses} answers"
        )
        for username, figures in sorted(crowd_figures(campaign).items()):
            self.stdout.write(f"  {username}: {figures['assignments']} HITs, quiz passed {figures['passed_quiz']}")

    def _truth(self, given: str | None) -> dict:
        if given is None:
            return {}
        path = Path(given)
        if not path.is_file():
            raise CommandError(f"--truth {path}: no such file")
        try:
            return read_truth(path)
        except ValueError as error:
            raise CommandError(f"--truth {error}") from None
