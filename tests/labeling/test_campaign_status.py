import pytest

from labeling.models import Campaign
from labeling.services.campaigns import StatusChangeRefused, set_campaign_status

pytestmark = pytest.mark.django_db


def test_a_draft_campaign_opens_pauses_reopens_and_closes_for_good():
    campaign = Campaign.objects.create(name="c")
    for status in (Campaign.OPEN, Campaign.PAUSED, Campaign.OPEN, Campaign.CLOSED):
        set_campaign_status(campaign, status)
        assert Campaign.objects.get(pk=campaign.pk).status == status
    with pytest.raises(StatusChangeRefused, match="a closed campaign cannot become open"):
        set_campaign_status(campaign, Campaign.OPEN)


def test_it_refuses_a_move_when_someone_changed_the_campaign_meanwhile():
    campaign = Campaign.objects.create(name="c")
    stale = Campaign.objects.get(pk=campaign.pk)
    set_campaign_status(campaign, Campaign.CLOSED)
    with pytest.raises(StatusChangeRefused, match="changed meanwhile"):
        set_campaign_status(stale, Campaign.OPEN)
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.CLOSED


def test_the_dashboard_button_opens_a_campaign_for_staff_only(client, researcher, annotators):
    campaign = Campaign.objects.create(name="c")
    client.force_login(annotators[0])
    client.post(f"/labeling/campaigns/{campaign.pk}/status/", {"status": "open"})
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.DRAFT
    client.force_login(researcher)
    response = client.post(f"/labeling/campaigns/{campaign.pk}/status/", {"status": "open"})
    assert response.status_code == 302
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.OPEN


def test_the_api_changes_the_status_and_explains_a_refusal(client, researcher):
    campaign = Campaign.objects.create(name="c", status=Campaign.CLOSED)
    client.force_login(researcher)
    response = client.post(f"/api/campaigns/{campaign.pk}/status/", {"status": "open"}, content_type="application/json")
    assert response.status_code == 400
    assert "cannot become open" in response.json()["status"]
    campaign.status = Campaign.DRAFT
    campaign.save()
    response = client.post(f"/api/campaigns/{campaign.pk}/status/", {"status": "open"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["status"] == "open"
