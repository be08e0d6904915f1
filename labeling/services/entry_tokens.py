"""A campaign's entry token and the link token of each of its publications: the secret its
MTurk and Prolific links carry.

The platforms do not sign the parameters they append (workerId, PROLIFIC_PID, ...), so without a
secret anyone could make up a link and create workers. The campaign's token is random, kept on the
campaign and rotatable: rotating it turns every link handed out before into a 403. A link does not
carry it as is: each platform's link carries its publication's token, an HMAC of the platform's
name under the campaign's token, so the Prolific study link does not open the MTurk landing (nor
the other way round) and no link opens another campaign. Checked in constant time at every landing.
"""

import hashlib
import hmac
import secrets
from urllib.parse import urlencode

from django.db import transaction
from django.urls import reverse

from labeling.models import Campaign, Worker, new_entry_token
from labeling.work import audit_trail

TOKEN_PARAMETER = "token"


def publication_token(campaign: Campaign, platform: str) -> str:
    """The token the campaign's link on `platform` (Worker.MTURK, Worker.PROLIFIC) carries."""
    digest = hmac.new(campaign.entry_token.encode(), f"publication:{platform}".encode(), hashlib.sha256)
    return digest.hexdigest()[:40]


def token_matches(campaign: Campaign, given: str | None, platform: str) -> bool:
    """Whether `given` is the token of the campaign's link on `platform` (never the other platform's)."""
    expected = publication_token(campaign, platform)
    return bool(given) and secrets.compare_digest(given.encode(), expected.encode())


def rotate_entry_token(campaign: Campaign) -> str:
    """Give the campaign a new entry token (the one writer of it); returns the new token."""
    token = new_entry_token()
    with transaction.atomic():
        Campaign.objects.filter(pk=campaign.pk).update(entry_token=token)
        audit_trail.setting_changed(campaign, "entry_token", None, None)  # the token itself is never logged
    campaign.entry_token = token
    return token


PROLIFIC_PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def platform_links(base_url: str, campaign: Campaign) -> dict[str, str]:
    """The links a researcher pastes into the platforms, token included: MTurk's ExternalQuestion
    URL (publish_campaign adds `hit`; MTurk appends its own ids) and Prolific's study URL."""
    base = base_url.rstrip("/")

    def query(platform: str) -> str:
        return urlencode({"campaign": campaign.pk, TOKEN_PARAMETER: publication_token(campaign, platform)})

    return {
        "mturk": f"{base}{reverse('labeling:platform_mturk')}?{query(Worker.MTURK)}",
        "prolific": f"{base}{reverse('labeling:platform_prolific')}?{query(Worker.PROLIFIC)}&{PROLIFIC_PLACEHOLDERS}",
    }
