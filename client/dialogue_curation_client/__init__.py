"""A typed client for the dialogue curation REST API (docs/api.md):

from dialogue_curation_client import Client

client = Client.sign_in("https://labels.example.org", "researcher", "password")
campaign = client.create_campaign("Pilot", recent_dialogues=20)
client.wait_for_job(client.publish(campaign.id).id)
print(client.progress(campaign.id).completion)
"""

from dialogue_curation_client.client import Client
from dialogue_curation_client.errors import (
    ApiError,
    BadRequest,
    Conflict,
    JobFailed,
    NotFound,
    NotReady,
    PermissionDenied,
    ServerError,
    SignInRefused,
)
from dialogue_curation_client.models import Campaign, Job, Progress, StudyReport, Table4

__all__ = [
    "ApiError",
    "BadRequest",
    "Campaign",
    "Client",
    "Conflict",
    "Job",
    "JobFailed",
    "NotFound",
    "NotReady",
    "PermissionDenied",
    "Progress",
    "ServerError",
    "SignInRefused",
    "StudyReport",
    "Table4",
]
