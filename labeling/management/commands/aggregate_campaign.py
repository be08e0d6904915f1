import json

from django.core.management.base import BaseCommand, CommandError

from labeling import task_types
from labeling.aggregate import aggregate_campaign
from labeling.follow_up import create_follow_up_hits, extra_seat_counts
from labeling.models import Campaign


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
        task_type = task_types.of(campaign)
        if not task_type.uses_labels:  # e.g. pairwise: win rates per question, position bias
            self.stdout.write(json.dumps({"task_type": task_type.name, **task_type.aggregate(campaign)}))
            return
        extra = extra_seat_counts(create_follow_up_hits(campaign))
        self.stdout.write(json.dumps({**extra, **aggregate_campaign(campaign)}))
