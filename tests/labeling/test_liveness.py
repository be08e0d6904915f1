"""Can a campaign finish? labeling.crowd.liveness (pure) at its edges, and what the campaign page and
the publish page say with the numbers."""

import pytest

from labeling.crowd.liveness import assess, pool_items_needed

PAPER = {"hits": 700, "seats_per_hit": 3, "quiz_per_hit": 5, "exposure_cap": 3}


def test_the_papers_campaign_needs_one_pool_item_per_quiz_place_and_three_workers():
    needs = assess(**PAPER, pool_items=3500)
    assert (needs.seats, needs.workers_needed, needs.pool_items_needed) == (2100, 3, 3500)
    assert needs.can_complete and not needs.notes


def test_one_pool_item_short_is_refused_with_the_numbers():
    needs = assess(**PAPER, pool_items=3499)
    assert not needs.can_complete
    assert "has 3499 usable items" in needs.problems[0] and "need 3500 (add 1 " in needs.problems[0]


def test_a_higher_cap_lets_a_shared_item_serve_more_hits():
    assert pool_items_needed(700, 3, 5, 6, items_per_seat=False) == 1750
    assert pool_items_needed(700, 3, 5, 5, items_per_seat=False) == 3500  # 5 // 3: still one HIT


def test_a_cap_below_the_seats_can_never_be_served():
    needs = assess(**{**PAPER, "exposure_cap": 2}, pool_items=10_000)
    assert not needs.can_complete and "QUIZ_MAX_EXPOSURES >= 3 (it is 2)" in needs.problems[0]


def test_items_per_seat_need_a_third_of_the_places_and_warn_about_busy_workers():
    needs = assess(**PAPER, items_per_seat=True, pool_items=3500)
    assert needs.pool_items_needed == 3500 and needs.can_complete  # 10,500 places / 3 HITs each
    assert "closes up to 10 other HITs" in needs.notes[0]
    assert pool_items_needed(1, 3, 5, 3, items_per_seat=True) == 15  # one HIT: no item twice in it


def test_no_quiz_or_no_hits_need_no_pool():
    assert assess(**{**PAPER, "quiz_per_hit": 0}, pool_items=0).can_complete
    empty = assess(**{**PAPER, "hits": 0}, pool_items=0, workers=0)
    assert empty.can_complete and empty.workers_needed == 0


def test_built_hits_do_not_ask_the_pool_again():
    needs = assess(**PAPER, pool_items=0, built=True)
    assert needs.can_complete and needs.pool_items_needed == 0


@pytest.mark.parametrize(("workers", "ok"), [(2, False), (3, True)])
def test_a_hit_of_three_seats_needs_three_different_workers(workers, ok):
    needs = assess(**PAPER, built=True, workers=workers)
    assert needs.can_complete is ok
    if not ok:
        assert "need at least 3 different workers; 2 can take them" in needs.problems[0]


@pytest.mark.parametrize(("places", "ok"), [(2099, False), (2100, True)])
def test_one_hit_per_platform_identity_needs_a_place_per_seat(places, ok):
    needs = assess(**PAPER, built=True, workers=places, hits_per_worker=1)
    assert needs.workers_needed == 2100 and needs.can_complete is ok


def test_negative_figures_are_refused_naming_the_field():
    with pytest.raises(ValueError, match="hits: must be 0 or more"):
        assess(**{**PAPER, "hits": -1})
    with pytest.raises(ValueError, match="exposure_cap"):
        assess(**{**PAPER, "exposure_cap": 0})


# --- the pages ----------------------------------------------------------------------------------


@pytest.fixture
def two_hits(db, settings):
    from tests.labeling.platform_helpers import draft_campaign
    from tests.labeling.test_quiz_pool import make_pool

    settings.QUIZ_DEMO_BANK = False
    make_pool(8)
    return draft_campaign(hits=2, currency="GBP")  # 2 HITs x 3 seats, 1 quiz screen each


def test_the_campaign_page_says_two_site_annotators_cannot_finish_hits_of_three_seats(
    client, researcher, annotators, two_hits
):
    from django.urls import reverse

    from labeling.services.workers import set_blocked, worker_for_user

    client.force_login(researcher)
    url = reverse("labeling:campaign_detail", args=[two_hits.pk])
    html = client.get(url).content.decode()
    assert "Can it finish: yes." in html and "need at least 3 different workers; 3 site annotator accounts" in html
    assert "Ten more HITs like these would draw 10 quiz pool items" in html
    set_blocked(worker_for_user(annotators[0]), True)
    html = client.get(url).content.decode()
    assert "not as it stands" in html and "6 seats (2 HITs x 3) need at least 3 different workers; 2 can take" in html


def test_a_published_campaigns_page_counts_no_site_annotators(client, researcher, two_hits):
    from django.urls import reverse

    from labeling.models import Publication

    Publication.objects.create(campaign=two_hits, platform="prolific", external_id="STUDY1", places=6)
    client.force_login(researcher)
    html = client.get(reverse("labeling:campaign_detail", args=[two_hits.pk])).content.decode()
    assert "Can it finish: yes." in html and "site annotator" not in html  # no annotator account exists
    assert "on its platform each seat needs a place" in html


def test_publishing_fewer_places_than_open_seats_is_refused_with_the_numbers(client, researcher, two_hits, monkeypatch):
    from dataclasses import replace

    from django.urls import reverse

    from labeling.models import Publication
    from labeling.platforms import get_platform

    client.force_login(researcher)
    url = reverse("labeling:campaign_publish", args=[two_hits.pk])
    html = client.get(url + "?platform=prolific").content.decode()
    assert "Can it finish: yes" in html and "need 6 places" in html and 'id="confirm-publish"' in html
    prolific = type(get_platform("prolific"))
    full = prolific.cost_preview
    monkeypatch.setattr(prolific, "cost_preview", lambda self, *a, **k: replace(full(self, *a, **k), seats=5))
    response = client.post(url, {"platform": "prolific"})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="confirm-publish"' not in html
    assert "6 seats (2 HITs x 3) need at least 6 different workers; 5 can take them" in html
    assert not Publication.objects.exists()
