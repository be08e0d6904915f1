"""Crowd platform adapters: the MTurk client is patched at `make_client`; nothing touches the network."""

from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from labeling.models import HIT, Campaign
from labeling.platforms import PlatformError, get_platform, hit_url, mturk, publish_campaign
from labeling.platforms.base import ExternalResult
from labeling.platforms.local import LocalPlatform

ANSWER_XML = (
    '<QuestionFormAnswers xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2005-10-01/QuestionFormAnswers.xsd"><Answer><QuestionIdentifier>completion_code</QuestionIdentifier>'
    "<FreeText>AB12CD</FreeText></Answer></QuestionFormAnswers>"
)


class FakeMTurk:
    """Records calls the way boto3's client is called; pages list_assignments_for_hit in two."""

    def __init__(self):
        self.calls = []

    def create_hit(self, **kwargs):
        self.calls.append(("create_hit", kwargs))
        return {"HIT": {"HITId": f"MT{len(self.calls)}"}}

    def list_assignments_for_hit(self, **kwargs):
        self.calls.append(("list_assignments_for_hit", kwargs))
        if "NextToken" not in kwargs:
            return {
                "Assignments": [
                    {"AssignmentId": "A1", "WorkerId": "W1", "AssignmentStatus": "Submitted", "Answer": ANSWER_XML}
                ],
                "NextToken": "t",
            }
        return {"Assignments": [{"AssignmentId": "A2", "WorkerId": "W2", "AssignmentStatus": "Approved"}]}

    def approve_assignment(self, **kwargs):
        self.calls.append(("approve_assignment", kwargs))


@pytest.fixture
def fake_mturk(monkeypatch):
    fake = FakeMTurk()
    requested = {}

    def make_client(sandbox=True):
        requested["sandbox"] = sandbox
        return fake

    monkeypatch.setattr(mturk, "make_client", make_client)
    fake.requested = requested
    return fake


@pytest.fixture
def campaign(db):
    campaign = Campaign.objects.create(name="Publish me", reward=Decimal("0.45"), time_limit_minutes=30)
    for position in (1, 2):
        HIT.objects.create(campaign=campaign, position=position, required_workers=3)
    return campaign


def test_the_external_question_points_at_our_hit_url_escaped():
    xml = mturk.external_question("https://site.example/labeling/platform/mturk/?campaign=1&hit=2")
    assert "<ExternalURL>https://site.example/labeling/platform/mturk/?campaign=1&amp;hit=2</ExternalURL>" in xml
    assert "ExternalQuestion.xsd" in xml


def test_make_client_uses_the_sandbox_by_default(monkeypatch):
    import boto3

    seen = {}
    monkeypatch.setattr(boto3, "client", lambda service, **options: seen.update(service=service, **options))
    mturk.make_client()
    assert seen == {"service": "mturk", "region_name": "us-east-1", "endpoint_url": mturk.SANDBOX_ENDPOINT}
    seen.clear()
    mturk.make_client(sandbox=False)
    assert "endpoint_url" not in seen


def test_publishing_on_mturk_creates_one_hit_each_and_records_its_id(campaign, fake_mturk):
    count = publish_campaign(campaign, get_platform("mturk"), "https://site.example")
    assert count == 2 and fake_mturk.requested == {"sandbox": True}
    hits = list(campaign.hits.order_by("position"))
    assert [h.external_id for h in hits] == ["MT1", "MT2"]
    _, first = fake_mturk.calls[0]
    assert first["Reward"] == "0.45" and first["MaxAssignments"] == 3
    assert first["AssignmentDurationInSeconds"] == 1800
    assert hit_url("https://site.example", hits[0]).replace("&", "&amp;") in first["Question"]
    campaign.refresh_from_db()
    assert campaign.status == Campaign.OPEN


def test_publishing_again_publishes_only_what_is_left(campaign, fake_mturk):
    HIT.objects.filter(campaign=campaign, position=1).update(external_id="ALREADY")
    assert publish_campaign(campaign, get_platform("mturk"), "https://site.example") == 1
    assert len(fake_mturk.calls) == 1
    assert set(campaign.hits.values_list("external_id", flat=True)) == {"ALREADY", "MT1"}


def test_fetching_results_follows_pages_and_reads_the_completion_code(campaign, fake_mturk):
    hit = campaign.hits.first()
    hit.external_id = "MT9"
    platform = get_platform("mturk")
    results = platform.fetch_results(hit)
    assert results == [
        ExternalResult("A1", "W1", "Submitted", {"completion_code": "AB12CD"}),
        ExternalResult("A2", "W2", "Approved", {}),
    ]
    platform.approve(results[0])
    assert fake_mturk.calls[-1] == ("approve_assignment", {"AssignmentId": "A1"})


def test_an_unpublished_hit_has_no_results(campaign, fake_mturk):
    with pytest.raises(PlatformError, match="not published"):
        get_platform("mturk").fetch_results(campaign.hits.first())


def test_the_local_platform_names_hits_without_calling_out(campaign):
    assert publish_campaign(campaign, LocalPlatform(), "http://localhost:8000") == 2
    assert sorted(campaign.hits.values_list("external_id", flat=True)) == sorted(
        f"local:{pk}" for pk in campaign.hits.values_list("pk", flat=True)
    )


def test_an_unknown_platform_is_an_error():
    with pytest.raises(PlatformError, match="unknown crowd platform 'prolific'"):
        get_platform("prolific")


def test_the_publish_command(campaign, fake_mturk, capsys):
    call_command("publish_campaign", str(campaign.pk), "--platform", "mturk", "--base-url", "https://site.example")
    assert "published 2 HIT(s)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no campaign 999"):
        call_command("publish_campaign", "999", "--base-url", "https://site.example")
