from django.core.management.base import BaseCommand, CommandError

from labeling.models import Campaign
from labeling.payments import payments_due, record_payments


class Command(BaseCommand):
    help = "Add the ledger entries owed for a campaign's approved assignments and list what is due."

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")

    def handle(self, *args, campaign_id: int, **options):
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            raise CommandError(f"no campaign {campaign_id}")
        counts = record_payments(campaign)
        self.stdout.write(f"{counts['new_entries']} new entries for {counts['approved']} approved assignments")
        for due in payments_due(campaign):
            self.stdout.write(f"{due.worker}\t{due.total}")
