"""Command 1's main job on the embedded default, idempotent: ingest the demo subtitles, run the
model-in-the-loop pipeline on them (weak labeler → candidates → a crowd campaign with HITs), open
the campaign, and create the demo researcher and three demo annotators."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import BaseCommand, call_command

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-researcher"
DEMO_ANNOTATORS = [(f"annotator{i}", f"demo-annotator{i}") for i in (1, 2, 3)]
DEMO_CAMPAIGN = "Demo campaign"


class Command(BaseCommand):
    help = "Ingest the demo subtitles, run the pipeline, open the demo campaign, create demo accounts."

    def handle(self, *args, **options):
        self._create_user(DEMO_USERNAME, DEMO_PASSWORD, is_staff=True)
        for username, password in DEMO_ANNOTATORS:
            self._create_user(username, password, is_staff=False)
        demo_dir = Path(settings.BASE_DIR) / "demo" / "subtitles"
        call_command("ingest", str(demo_dir), "--genre", "Drama", stdout=self.stdout)
        self._run_pipeline_once()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo ready. Researcher: {DEMO_USERNAME} / {DEMO_PASSWORD}. Annotators: "
                + ", ".join(f"{u} / {p}" for u, p in DEMO_ANNOTATORS)
            )
        )

    def _run_pipeline_once(self) -> None:
        from labeling.campaigns import set_campaign_status
        from labeling.models import Campaign

        campaign = Campaign.objects.filter(name=DEMO_CAMPAIGN).first()
        if campaign is None:
            # torch is imported only here, not when Django loads the command list
            from mlworkers.pipeline import run_demo_pipeline

            run_demo_pipeline(self.stdout, campaign_name=DEMO_CAMPAIGN)
            campaign = Campaign.objects.get(name=DEMO_CAMPAIGN)
        else:
            self.stdout.write(f"{DEMO_CAMPAIGN} exists already: pipeline not run again.")
        if campaign.status == Campaign.DRAFT:
            set_campaign_status(campaign, Campaign.OPEN)

    def _create_user(self, username: str, password: str, *, is_staff: bool) -> None:
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": is_staff, "email": f"{username}@example.org"}
        )
        if created:
            user.set_password(password)
            user.save()
