import json

from django.core.management.base import BaseCommand, CommandError

from labeling.aggregate import aggregate_campaign
from labeling.models import Campaign
from labeling.tiebreak import create_tiebreak_hits


class Command(BaseCommand):
    help = "Aggregate a campaign's answers (majority + Dawid-Skene) into AggregatedLabel and crowd TurnLabels."

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int)

    def handle(self, *args, campaign_id: int, **options):
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            raise CommandError(f"no campaign {campaign_id}")
        tiebreak_hits = create_tiebreak_hits(campaign)
        self.stdout.write(json.dumps({"tiebreak_hits": len(tiebreak_hits), **aggregate_campaign(campaign)}))
