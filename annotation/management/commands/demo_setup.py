"""Command 1's main job on the embedded default: ingest the demo corpus and create the demo researcher.

Later stages (weak labeling, a demo campaign, model rounds, exports) hook in through
`DEMO_STEPS`, so `make demo` always runs the whole pipeline that exists.
"""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import BaseCommand, call_command

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-researcher"


class Command(BaseCommand):
    help = "Ingest the demo subtitles and create the demo researcher account (idempotent)."

    def handle(self, *args, **options):
        self._create_researcher()
        demo_dir = Path(settings.BASE_DIR) / "demo" / "subtitles"
        call_command("ingest", str(demo_dir), "--genre", "Drama", stdout=self.stdout)
        # torch is imported only here, not when Django loads the command list
        from mlworkers.pipeline import run_demo_pipeline

        run_demo_pipeline(self.stdout)
        self.stdout.write(self.style.SUCCESS(f"Demo ready. Log in as {DEMO_USERNAME} / {DEMO_PASSWORD}."))

    def _create_researcher(self) -> None:
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=DEMO_USERNAME, defaults={"is_staff": True, "email": "demo@example.org"}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
