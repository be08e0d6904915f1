from django.core.management.base import BaseCommand, CommandError

from labeling.models import Campaign
from labeling.platforms import PlatformError, get_platform, publish_campaign
from labeling.services.campaigns import StatusChangeRefused


class Command(BaseCommand):
    help = "Publish a campaign's unpublished HITs on a crowd platform (local, mturk or prolific; MTurk's sandbox by default)."

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", type=int, help="the campaign's id")
        parser.add_argument(
            "--platform",
            default="local",
            choices=["local", "mturk", "prolific"],
            help="where to publish (local: this site's own accounts)",
        )
        parser.add_argument(
            "--base-url", required=True, help="the site's public address, e.g. https://labels.example.org"
        )

    def handle(self, *args, campaign_id: int, platform: str, base_url: str, **options):
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            raise CommandError(f"no campaign {campaign_id}")
        try:
            count = publish_campaign(campaign, get_platform(platform), base_url)
        except (PlatformError, StatusChangeRefused) as error:
            raise CommandError(str(error))
        self.stdout.write(f"published {count} HIT(s) of campaign {campaign_id} on {platform}")
