"""A campaign's entry token: the secret its MTurk and Prolific links carry.

The platforms do not sign the parameters they append (workerId, PROLIFIC_PID, ...), so without a
secret anyone could make up a link and create workers. The token is random per campaign, shown to
staff on the campaign page, checked in constant time at every landing, and rotatable: rotating it
turns every link handed out before into a 403.
"""

import secrets
from urllib.parse import urlencode

from django.db import transaction
from django.urls import reverse

from labeling import audit_trail
from labeling.models import Campaign, new_entry_token

TOKEN_PARAMETER = "token"


def token_matches(campaign: Campaign, given: str | None) -> bool:
    return bool(given) and secrets.compare_digest(given.encode(), campaign.entry_token.encode())


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
    query = urlencode({"campaign": campaign.pk, TOKEN_PARAMETER: campaign.entry_token})
    return {
        "mturk": f"{base}{reverse('labeling:platform_mturk')}?{query}",
        "prolific": f"{base}{reverse('labeling:platform_prolific')}?{query}&{PROLIFIC_PLACEHOLDERS}",
    }
