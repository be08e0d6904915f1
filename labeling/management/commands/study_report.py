from django.core.management.base import BaseCommand, CommandError

from labeling.models import Campaign
from labeling.reports.study import build_report, to_json, to_latex, to_markdown, to_standalone_latex

RENDERERS = {"md": to_markdown, "tex": to_latex, "standalone-tex": to_standalone_latex, "json": to_json}


class Command(BaseCommand):
    help = (
        "A campaign's study report (EDOS Table 4 figures, kappa, Krippendorff's alpha and AC1 with 95 % bootstrap "
        "intervals, the crowd, the paper tables, models as raters, methods and limitations) as Markdown, LaTeX "
        "(tables and paragraph to paste, or a standalone document with the citations) or JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")
        parser.add_argument("--format", choices=sorted(RENDERERS), default="md", help="md, tex, standalone-tex or json")
        parser.add_argument("--seed", type=int, default=0, help="the bootstrap's random seed")
        parser.add_argument(
            "--resamples", type=int, default=None, help="bootstrap resamples (default STUDY_REPORT_RESAMPLES)"
        )

    def handle(self, *args, campaign_id: int, format: str, seed: int, resamples: int | None, **options):
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            raise CommandError(f"no campaign {campaign_id}")
        if resamples is not None and resamples < 1:
            raise CommandError("--resamples must be at least 1")
        report = build_report(campaign, resamples=resamples, seed=seed)
        self.stdout.write(RENDERERS[format](report))
