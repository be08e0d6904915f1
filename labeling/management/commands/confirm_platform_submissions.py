from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from labeling.actions import SubmissionRefused
from labeling.actions.submit import confirm_platform_submission
from labeling.models import Assignment


class Command(BaseCommand):
    help = (
        "Mark crowd-platform submissions as confirmed by the platform (their answers then count), by the "
        "platform's own ids (MTurk assignmentId, Prolific SESSION_ID). All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")
        parser.add_argument(
            "platform_assignment_ids",
            nargs="+",
            metavar="PLATFORM_ASSIGNMENT_ID",
            help="MTurk assignmentId or Prolific SESSION_ID of each submission checked on the platform",
        )

    def handle(self, *args, campaign_id: int, platform_assignment_ids: list[str], **options):
        with transaction.atomic():
            confirmed = [self._confirm(campaign_id, external) for external in platform_assignment_ids]
        self.stdout.write(
            f"confirmed {sum(confirmed)} submission(s); {len(confirmed) - sum(confirmed)} were confirmed already"
        )

    def _confirm(self, campaign_id: int, external: str) -> bool:
        assignment = (
            Assignment.objects.filter(hit__campaign_id=campaign_id, platform_assignment_id=external)
            .select_related("worker")
            .first()
        )
        if assignment is None:
            raise CommandError(f"{external}: no assignment of campaign {campaign_id} has this platform id")
        try:
            return confirm_platform_submission(assignment)
        except SubmissionRefused as refusal:
            raise CommandError(f"{external}: {refusal.message}")
