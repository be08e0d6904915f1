"""The client against a real site (tests/client/server.py: the Django server and a job worker on the
test database): a researcher's script signs in, creates a campaign, publishes it on the local
platform, follows its progress, reads the study report and exports the labels; refusals arrive as
typed errors carrying the server's message. Real processes: `slow` and `alone`, PostgreSQL only."""

import pytest
from django.db import connection

from annotation.models import TurnLabel
from labeling.models import HIT, Campaign
from tests.client.server import PASSWORD

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.alone,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the server shares the test database (PostgreSQL)"),
    pytest.mark.usefixtures("quiz_demo_bank"),
]
LABELS = ["Sad", "Angry", "Joyful", "Neutral", "Questioning", "Acknowledging"]


def test_a_script_runs_a_study_through_the_client(site, study):
    from dialogue_curation_client import Client

    client = Client.sign_in(site.url, "researcher", PASSWORD)
    campaign = client.create_campaign(
        "From the client", recent_dialogues=4, dialogues_per_hit=2, quiz_per_hit=1, labels=LABELS,
        fallback_choices=["Neutral", "Questioning", "Acknowledging"],
    )  # fmt: skip
    assert (campaign.status, campaign.hit_count) == ("draft", 2) == (Campaign.objects.get(pk=campaign.id).status, 2)
    assert campaign.id in {c.id for c in client.campaigns()}

    job = client.wait_for_job(client.publish(campaign.id, platform="local").id, timeout=120)
    assert job.kind == "labeling.platform_publish" and job.result["published"] == 2
    assert client.campaign(campaign.id).status == "open" == Campaign.objects.get(pk=campaign.id).status
    assert set(HIT.objects.filter(campaign_id=campaign.id).values_list("external_id", flat=True)) == {
        f"local:{pk}" for pk in HIT.objects.filter(campaign_id=campaign.id).values_list("pk", flat=True)
    }

    progress = client.progress(campaign.id, wait=120)  # the worker computes the first figures
    assert (progress.hits, progress.assignments_needed, progress.assignments_submitted) == (2, 6, 0)
    answered = client.progress(study.pk, wait=120)
    assert (answered.assignments_submitted, answered.completion, answered.current) == (3, 1.0, True)

    report = client.study_report(study.pk)
    assert (report.table4.dialogues, report.table4.majority) == (2, 2)
    assert report.campaign["name"] == "Answered" and "overall" in report.agreement

    rows = client.export_labels(kind="gold", file_format="csv").splitlines()
    crowd = TurnLabel.objects.filter(source=TurnLabel.CROWD).count()
    assert crowd == 2 and len(rows) == 1 + crowd, rows
    assert "label" in rows[0] and {"Angry", "Sad"} <= {label for row in rows[1:] for label in LABELS if label in row}


def test_refusals_arrive_as_typed_errors_with_the_servers_message(site, study):
    from dialogue_curation_client import BadRequest, Client, NotFound, PermissionDenied, SignInRefused

    with pytest.raises(SignInRefused, match="researcher"):
        Client.sign_in(site.url, "researcher", "not the password")
    with pytest.raises(PermissionDenied) as denied:
        list(Client.sign_in(site.url, "annotator1", PASSWORD).campaigns())
    assert denied.value.status == 403 and "permission" in denied.value.message

    client = Client.sign_in(site.url, "researcher", PASSWORD)
    with pytest.raises(BadRequest) as refused:
        client.create_campaign("Bad", fallback_choices=["Sad", "Nope"])
    assert "not labels: Nope" in " ".join(refused.value.field_errors["fallback_choices"])
    assert not Campaign.objects.filter(name="Bad").exists()
    with pytest.raises(NotFound):
        client.campaign(999_999)
    client.set_status(study.pk, "closed")
    with pytest.raises(BadRequest, match="closed"):
        client.publish(study.pk)
    with pytest.raises(BadRequest) as bad_platform:
        client.publish(study.pk, platform="elsewhere")
    assert list(bad_platform.value.field_errors) == ["platform"]
