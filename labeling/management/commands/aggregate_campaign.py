import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from labeling import task_types
from labeling.models import Campaign
from labeling.services.adjudication import announce_waiting


class Command(BaseCommand):
    help = (
        "Aggregate a campaign's answers with its task type: labels by majority + Dawid-Skene into AggregatedLabel "
        "and crowd TurnLabels; pairwise into win rates per question."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")

    def handle(self, *args, campaign_id: int, **options):
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            raise CommandError(f"no campaign {campaign_id}")
        outcome = task_types.of(campaign).aggregate(campaign)
        announce_waiting(campaign, f"command-{timezone.now().isoformat()}")
        self.stdout.write(json.dumps(outcome))
