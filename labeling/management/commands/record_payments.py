from django.core.management.base import BaseCommand, CommandError

from labeling.models import Campaign
from labeling.platforms.costs import money
from labeling.services.payments import approve_submitted as approve_submitted_work
from labeling.services.payments import mark_paid as mark_entries_paid
from labeling.services.payments import payments_due, record_payments


class Command(BaseCommand):
    help = "Add the ledger entries owed for a campaign's approved assignments and list what is due."

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")
        parser.add_argument(
            "--approve-submitted",
            action="store_true",
            help="first approve every submitted assignment of unblocked site workers (the campaign page's button)",
        )
        parser.add_argument(
            "--mark-paid",
            action="store_true",
            help="then stamp every due entry paid (after paying it outside the site)",
        )

    def handle(self, *args, campaign_id: int, approve_submitted: bool, mark_paid: bool, **options):
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            raise CommandError(f"no campaign {campaign_id}")
        if approve_submitted:
            self.stdout.write(f"{approve_submitted_work(campaign)} submitted assignments approved")
        counts = record_payments(campaign)
        self.stdout.write(f"{counts['new_entries']} new entries for {counts['approved']} approved assignments")
        for due in payments_due(campaign):
            self.stdout.write(f"{due.worker}\t{money(due.total, campaign.currency)}")
        if mark_paid:
            self.stdout.write(f"{mark_entries_paid(campaign)} entries marked paid")
