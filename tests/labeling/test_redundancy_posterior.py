"""until_agreement driven by the Dawid-Skene posterior: an item with a majority still gets one more
seat while its posterior's maximum is below the campaign's setting (exactly at it is enough), within
the cap; off by default."""

import math

import pytest
from rest_framework.test import APIClient

from labeling.crowd.redundancy import RedundancyPolicy, setting_errors, settle
from labeling.models import Campaign, HITItem
from labeling.task_types.last_turn_label.aggregation import campaign_votes
from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits, posterior_maxima
from labeling.work.policy import policy_of
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

UNTIL = "until_agreement"


# --- the pure rule ------------------------------------------------------------------------------


def test_a_majority_below_the_posterior_setting_wants_one_more_seat_and_at_it_is_settled():
    policy = RedundancyPolicy(UNTIL, cap=3, posterior_below=0.8)
    agreeing = ["Sad", "Sad"]
    assert settle(policy, agreeing, posterior_max=0.8) == settle(RedundancyPolicy(UNTIL, cap=3), agreeing)
    assert settle(policy, agreeing, posterior_max=0.8).reason == "majority"
    below = settle(policy, agreeing, posterior_max=math.nextafter(0.8, 0))
    assert (below.done, below.seats_wanted, below.reason) == (False, 3, "open")


def test_the_cap_holds_and_an_unknown_posterior_or_no_setting_asks_nothing():
    at_cap = settle(RedundancyPolicy(UNTIL, cap=2, posterior_below=0.99), ["Sad", "Sad"], posterior_max=0.5)
    assert (at_cap.done, at_cap.gold) == (True, "Sad")
    assert settle(RedundancyPolicy(UNTIL, posterior_below=0.99), ["Sad", "Sad"]).done
    assert settle(RedundancyPolicy(UNTIL), ["Sad", "Sad"], posterior_max=0.1).done
    # no majority: open whatever the posterior says
    assert not settle(RedundancyPolicy(UNTIL, posterior_below=0.5), ["Sad", "Angry"], posterior_max=0.9).done


def test_the_setting_is_a_probability_and_needs_a_policy_that_buys_seats():
    assert "posterior_below" in setting_errors(UNTIL, 3, None, 1.5)
    assert "posterior_below" in setting_errors("fixed", 3, None, 0.9)
    assert setting_errors(UNTIL, 3, None, 0.9) == {} and setting_errors("fixed", 3, None, None) == {}
    with pytest.raises(ValueError, match="posterior_below"):
        RedundancyPolicy(UNTIL, posterior_below=-0.1)


# --- through the campaign's follow-up seats -----------------------------------------------------


@pytest.fixture
def agreeing_and_split(db):
    campaign = Campaign.objects.create(name="Until", status=Campaign.OPEN, redundancy_policy=UNTIL, quiz_per_hit=0)
    dialogues = make_dialogues(2)
    make_answered_hit(campaign, make_workers(2), {dialogues[0]: ["Sad", "Sad"], dialogues[1]: ["Sad", "Angry"]})
    return campaign, dialogues


def _followed_up(campaign: Campaign, posterior_below: float | None) -> set[int]:
    Campaign.objects.filter(pk=campaign.pk).update(posterior_below=posterior_below)
    campaign.refresh_from_db()
    hits = create_follow_up_hits(campaign, seed=1)
    dialogues = set(HITItem.objects.filter(hit__in=hits).values_list("dialogue_id", flat=True))
    HITItem.objects.filter(hit__in=hits).delete()  # measure each setting from the same answers
    for hit in hits:
        hit.delete()
    return dialogues


def test_the_agreeing_item_gets_a_seat_only_while_its_posterior_is_below_the_setting(agreeing_and_split):
    campaign, (agreeing, split) = agreeing_and_split
    turn = agreeing.turns.order_by("-position").first().pk
    at = posterior_maxima(campaign_votes(campaign))[turn]
    assert 0 < at < 1
    assert _followed_up(campaign, None) == {split.pk}  # off: the majority settles it
    assert _followed_up(campaign, at) == {split.pk}  # exactly at the setting: settled
    assert _followed_up(campaign, math.nextafter(at, 1)) == {agreeing.pk, split.pk}
    assert policy_of(campaign).posterior_below == math.nextafter(at, 1)


@pytest.mark.django_db
def test_the_api_takes_the_setting_and_refuses_it_under_fixed(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    refused = client.post("/api/campaigns/", {"name": "x", "posterior_below": 0.9}, format="json")
    assert refused.status_code == 400 and "posterior_below" in refused.data
    body = {"name": "p", "redundancy_policy": UNTIL, "posterior_below": 0.95}
    assert client.post("/api/campaigns/", body, format="json").status_code == 201
    assert Campaign.objects.get(name="p").posterior_below == 0.95
