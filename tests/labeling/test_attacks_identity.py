"""Issue 34's attacks on who may hold what, each through the real landing URLs and pages: one
person with a study link, made-up platform ids and a few addresses must not be able to shut a
paid study. Each test carries out one row of the issue's table and asserts the held outcome.

The study is the demo's shape: 14 HITs of three seats (42 seats), quiz items from a secret pool.
"""

import re
import time

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from labeling.actions.claim import claim_next_hit, expire_stale_assignments
from labeling.actions.submit import confirm_platform_submission, submit_assignment
from labeling.models import HIT, Assignment, Campaign, Publication, QuizQuestion, Worker
from labeling.platforms import prolific_checks
from labeling.services import workers
from labeling.services.workers import worker_for_user
from tests.labeling.clock import clock
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign
from tests.labeling.platform_helpers import mturk_landing, prolific_landing, prolific_sessions

__all__ = ["clock", "prolific_sessions"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("prolific_sessions")]

STUDY = "60attackstudy000000000000"
TIME_LIMIT = 30  # minutes
ATTACKER_V4 = ("203.0.113.7", "198.51.100.99")
ATTACKER_V6_SITE = "2001:db8:bad"  # one /48: the attacker's /64s are 2001:db8:bad:<n>::/64


@pytest.fixture(autouse=True)
def _no_refusals_counted_yet():
    """The sessions Prolific refused are counted in the cache, which outlives a test's rollback."""
    cache.clear()


@pytest.fixture(autouse=True)
def _pool(settings):
    """A secret pool of quiz items (the tests build their HITs from it, not the demo bank)."""
    settings.QUIZ_DEMO_BANK = False
    settings.QUIZ_MAX_EXPOSURES = 3
    from annotation.models import Label

    sad = Label.objects.get(name="Sad")
    for dialogue in make_dialogues(30, prefix="pool"):
        QuizQuestion.objects.create(
            dialogue=dialogue, text=dialogue.turns.last().text, gold_label=sad, source=QuizQuestion.IMPORTED
        )


def demo_shaped(name: str = "Night shift", **fields) -> Campaign:
    """14 HITs x 3 seats = 42 seats, two dialogues and one quiz screen each."""
    from labeling.work.hits import build_hits

    values = {"dialogues_per_hit": 2, "quiz_per_hit": 1, "workers_per_hit": 3, "time_limit_minutes": TIME_LIMIT}
    campaign = open_campaign(name=name, **(values | fields))
    build_hits(campaign, make_dialogues(28, prefix=f"{name[:3]}{campaign.pk}-"), seed=4)
    return campaign


def on_prolific(campaign: Campaign) -> Campaign:
    Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=STUDY)
    return campaign


def on_mturk(campaign: Campaign) -> Campaign:
    """Published on MTurk as publish_campaign leaves it: each HIT has MTurk's HIT id."""
    Publication.objects.create(campaign=campaign, platform=Worker.MTURK, external_id="TYPE1")
    for hit in campaign.hits.all():
        HIT.objects.filter(pk=hit.pk).update(external_id=f"MT{hit.pk}")
    return campaign


def free_seats(campaign: Campaign) -> int:
    return sum(campaign.hits.values_list("seats_free", flat=True))


def attacker_addresses(landings: int):
    """Two IPv4 addresses and 29 /64s of one IPv6 /48, in turn."""
    for n in range(landings):
        if n % 3 < 2:
            yield ATTACKER_V4[n % 3]
        else:
            yield f"{ATTACKER_V6_SITE}:{n % 29:x}::{n:x}"


def mturk(campaign: Campaign, browser: Client, worker: str, assignment: str, hit: HIT | None = None, **kwargs):
    hit_id = hit.external_id if hit is not None else "HANDMADE1"
    return browser.get(mturk_landing(campaign, worker=worker, assignment=assignment, hit_id=hit_id), **kwargs)


def landed(response) -> Assignment:
    assert response.status_code == 302, response.content.decode()[:400]
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))


def submit_through_pages(browser: Client, assignment: Assignment) -> None:
    answer_everything(assignment)
    assert browser.post(reverse("labeling:assignment_submit", args=[assignment.pk])).status_code == 302


# --- made-up ids through both platforms' URLs: an honest participant always gets a HIT ----------


def test_made_up_prolific_ids_hold_nothing_and_honest_participants_always_get_a_hit(prolific_sessions):
    campaign = on_prolific(demo_shaped())
    honest, statuses, started = 0, [], time.monotonic()
    for n, address in enumerate(attacker_addresses(90)):
        made_up = prolific_landing(campaign, worker=f"FAKE{n}", session=f"FAKESESSION{n}", study=STUDY, made_up=True)
        statuses.append(Client(REMOTE_ADDR=address).get(made_up).status_code)
        # the Prolific link's token does not open the MTurk landing either
        other_platform = made_up.replace("/platform/prolific/", "/platform/mturk/")
        assert Client(REMOTE_ADDR=address).get(other_platform).status_code == 403
        if n % 10 == 9:  # an honest participant lands at any moment
            link = prolific_landing(campaign, worker=f"HONEST{n}", session=f"REAL{n}", study=STUDY)
            landed(Client(REMOTE_ADDR=f"192.0.2.{n}").get(link))
            honest += 1
    assert Worker.objects.exclude(landing_key="").count() == honest == 9
    assert free_seats(campaign) == 42 - honest
    # Prolific refused 10 sessions per IPv4 address and 20 from the /48; past that each of the three
    # blocks is asked one session at a time, each refusal holding its turn (REFUSED_TURN): the flood
    # polls and is barely asked (it cannot spend the API's rate limit honest landings need), and no
    # address is shut. Within a session's first minutes a 404 is asked again on a reload
    # (RECHECK_WINDOW): the page keeps checking (202) and nothing is created meanwhile
    turns = 3 * (int((time.monotonic() - started) / prolific_checks.REFUSED_TURN.total_seconds()) + 1)
    assert statuses.count(202) == 90 and 40 <= prolific_sessions.calls - honest <= 40 + turns


def test_made_up_mturk_ids_take_phantom_places_and_never_a_seat_an_honest_worker_needs():
    campaign = on_mturk(demo_shaped())
    hits = list(campaign.hits.order_by("pk"))
    statuses = []
    for n, address in enumerate(attacker_addresses(120)):
        hit = hits[n % len(hits)]
        statuses.append(mturk(campaign, Client(REMOTE_ADDR=address), f"FAKE{n}", f"FAKEAS{n}", hit).status_code)
        if n % 20 == 19:  # an honest worker, whichever HIT MTurk offered, lands at any moment
            honest = landed(mturk(campaign, Client(REMOTE_ADDR=f"192.0.2.{n}"), f"HONEST{n}", f"REALAS{n}", hit))
            assert honest.hit_id == hit.pk
    # 10 per IPv4 address and 20 for the /48 got a place; the rest 429; no seat was taken
    assert statuses.count(302) == 40 and statuses.count(429) == 80
    assert free_seats(campaign) == 42
    assert Assignment.objects.filter(phantom=True).count() == 40 + 6
    # a hitId this study never published gets nothing
    assert mturk(campaign, Client(REMOTE_ADDR="192.0.2.200"), "ANY", "AS1").status_code == 403


def test_made_up_ids_on_a_hand_made_study_cannot_fill_it_and_their_seats_come_back_with_no_sync(clock, settings):
    settings.PLATFORM_UNCONFIRMED_GRACE_MINUTES = 15
    campaign = demo_shaped()  # no HIT published through us: a study made by hand on MTurk
    held = []
    for n, address in enumerate(attacker_addresses(90)):
        response = mturk(campaign, Client(REMOTE_ADDR=address), f"FAKE{n}", f"FAKEAS{n}")
        if response.status_code == 302:
            held.append(landed(response))
    assert len(held) == 40 and free_seats(campaign) == 2
    honest = landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.1"), "HONEST1", "REALAS1"))
    for assignment in held[:20]:  # half of them submit: work nobody will confirm
        answer_everything(assignment)
        submit_assignment(assignment)
    assert Publication.objects.count() == 0  # no platform, no sync: nothing to wait for
    clock.advance((TIME_LIMIT + 15) * 60 + 1)
    # the next claim (another honest landing) gives every lapsed seat back first
    landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.2"), "HONEST2", "REALAS2"))
    assert Assignment.objects.filter(pk__in=[a.pk for a in held], status=Assignment.EXPIRED).count() == 40
    honest.refresh_from_db()
    assert honest.status == Assignment.EXPIRED  # the honest one's own time ran out too (not submitted)
    assert free_seats(campaign) == 42 - 1


def test_unconfirmed_submitted_work_keeps_its_seat_until_the_time_limit_plus_the_grace(clock, settings):
    settings.PLATFORM_UNCONFIRMED_GRACE_MINUTES = 15
    campaign = demo_shaped()
    browser = Client(REMOTE_ADDR="203.0.113.7")
    assignment = landed(mturk(campaign, browser, "FAKE1", "FAKEAS1"))
    submit_through_pages(browser, assignment)
    clock.advance((TIME_LIMIT + 15) * 60 - 5)
    worker_for_user_claim = landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.3"), "HONEST", "REAL"))
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.SUBMITTED
    clock.advance(10)
    assert expire_stale_assignments() == 1  # the beat job's sweep, no sync
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.EXPIRED
    assert Assignment.objects.get(pk=worker_for_user_claim.pk).status == Assignment.ACCEPTED


def test_confirmed_work_and_proven_sessions_are_never_swept(clock, settings, prolific_sessions):
    settings.PLATFORM_UNCONFIRMED_GRACE_MINUTES = 15
    campaign = on_prolific(demo_shaped())
    browser = Client(REMOTE_ADDR="192.0.2.9")
    assignment = landed(browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY)))
    submit_through_pages(browser, assignment)
    clock.advance(7 * 24 * 3600)
    expire_stale_assignments()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.SUBMITTED
    assert not Assignment.objects.get(pk=assignment.pk).unproven


# --- one landing, one HIT, of its link's campaign -----------------------------------------------


def test_start_another_hit_after_submitting_gives_a_landing_nothing():
    campaign = demo_shaped()
    seats_taken = []
    for n in range(3):
        browser = Client(REMOTE_ADDR=ATTACKER_V4[0])
        assignment = landed(mturk(campaign, browser, f"FAKE{n}", f"FAKEAS{n}"))
        submit_through_pages(browser, assignment)
        done = browser.get(reverse("labeling:assignment_done", args=[assignment.pk])).content.decode()
        assert "Start another HIT" not in done and 'id="one-hit-per-session"' in done
        for _ in range(4):  # "Start another HIT" posted by hand all the same, again and again
            response = browser.post(reverse("labeling:claim"), {"campaign": campaign.pk})
            assert response.status_code == 302 and response["Location"] == reverse("labeling:worker_home")
            assert browser.post(reverse("labeling:claim")).status_code == 302
        home = browser.get(reverse("labeling:worker_home"))
        assert home.status_code == 200 and f'name="campaign" value="{campaign.pk}"' not in home.content.decode()
        seats_taken.append(42 - free_seats(campaign))
    assert Assignment.objects.count() == 3 and seats_taken == [1, 2, 3]


def test_reloading_the_landing_after_submitting_gives_no_second_hit(prolific_sessions):
    campaign = on_prolific(demo_shaped())
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY)
    browser = Client(REMOTE_ADDR="192.0.2.9")
    assignment = landed(browser.get(link))
    submit_through_pages(browser, assignment)
    prolific_sessions.finish("S1")
    again = browser.get(link)
    assert again.status_code == 409 and "already given out" in again.content.decode()
    assert Assignment.objects.count() == 1
    assert prolific_sessions.calls == 1  # a proven landing is not asked again


def test_a_link_with_ones_own_id_and_another_session_mid_hit_does_not_switch_silently():
    campaign = on_prolific(demo_shaped())
    browser = Client(REMOTE_ADDR="192.0.2.9")
    first = landed(browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY)))
    user_before = browser.session["_auth_user_id"]
    response = browser.get(prolific_landing(campaign, worker="P1", session="S2", study=STUDY))
    assert response.status_code == 200 and "confirm" in response.content.decode().lower()
    assert browser.session["_auth_user_id"] == user_before and Assignment.objects.get() == first


def test_a_platform_identity_never_claims_in_another_campaign():
    campaign = on_prolific(demo_shaped())
    site_only = demo_shaped(name="Site only", workers_per_hit=1)
    browser = Client(REMOTE_ADDR="192.0.2.9")
    mine = landed(browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY)))
    submit_through_pages(browser, mine)
    for _ in range(3):
        browser.post(reverse("labeling:claim"), {"campaign": site_only.pk})
        browser.post(reverse("labeling:claim"))
    assert not Assignment.objects.filter(hit__campaign=site_only).exists()
    assert free_seats(site_only) == 14
    # a session of this study on the other campaign's link (its token is that campaign's) is refused
    other_link = prolific_landing(site_only, worker="P1", session="S1", study=STUDY)
    assert Client(REMOTE_ADDR="192.0.2.9").get(other_link).status_code in (403, 409)
    assert not Assignment.objects.filter(hit__campaign=site_only).exists()


# --- caps an attacker cannot fill for others ----------------------------------------------------


def test_three_hundred_landings_from_one_slash_48_lock_out_no_one_else():
    campaign = demo_shaped()  # hand-made: unproven landings take seats, so the caps matter most
    statuses = [
        mturk(campaign, Client(REMOTE_ADDR=f"2001:db8:bad:{n % 29:x}::{n:x}"), f"F{n}", f"AS{n}").status_code
        for n in range(300)
    ]
    assert statuses.count(302) == 20 and statuses.count(429) == 280  # the /48's own cap
    for n, address in enumerate(("192.0.2.10", "2001:db8:1:1::5", "2001:db8:2::7")):
        landed(mturk(campaign, Client(REMOTE_ADDR=address), f"HONEST{n}", f"REAL{n}"))


def test_the_campaign_cap_counts_only_identities_holding_a_seat(settings):
    settings.PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR = 5
    campaign = on_mturk(demo_shaped())
    hit = campaign.hits.first()
    # 30 phantom places (they hold no seat) from 30 addresses: the campaign cap does not fill
    for n in range(30):
        landed(mturk(campaign, Client(REMOTE_ADDR=f"192.0.2.{n + 1}"), f"FAKE{n}", f"AS{n}", hit))
    landed(mturk(campaign, Client(REMOTE_ADDR="198.51.100.1"), "HONEST", "REAL", hit))


def test_landings_from_a_shared_address_do_not_lock_out_the_participants_behind_it():
    campaign = on_prolific(demo_shaped())
    hand_made = demo_shaped(name="Hand made")
    shared = "192.0.2.77"  # a university's or a carrier's one address
    statuses = [mturk(hand_made, Client(REMOTE_ADDR=shared), f"F{n}", f"AS{n}").status_code for n in range(12)]
    assert statuses == [302] * 10 + [429] * 2
    # Prolific participants behind it are proven at landing and count toward no cap
    for n in range(5):
        landed(Client(REMOTE_ADDR=shared).get(prolific_landing(campaign, worker=f"P{n}", session=f"S{n}", study=STUDY)))


@pytest.mark.parametrize("forwarded", ["not-an-address", "999.1.1.1", ""])
def test_an_unreadable_address_is_refused_and_creates_nothing(settings, forwarded):
    settings.TRUST_X_FORWARDED_FOR = True
    campaign = demo_shaped()
    browser = Client(REMOTE_ADDR="10.0.0.1" if forwarded else "", HTTP_X_FORWARDED_FOR=forwarded)
    response = mturk(campaign, browser, "FAKE1", "AS1")
    assert response.status_code == 403 and "address" in response.content.decode()
    assert not Worker.objects.exists() and not Assignment.objects.exists()


# --- one real worker, one seat of a HIT; no quiz item twice per person ----------------------------


def test_one_real_mturk_worker_on_two_mturk_hits_of_one_hit_of_ours_gets_one_place():
    campaign = on_mturk(demo_shaped())
    hit = campaign.hits.first()
    first = landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.5"), "REALW", "AS1", hit))
    # a second MTurk HIT mapped to the same HIT of ours (an extension published as its own HIT)
    response = mturk(campaign, Client(REMOTE_ADDR="192.0.2.5"), "REALW", "AS2", hit)
    assert response.status_code == 409
    assert Assignment.objects.filter(hit=hit).count() == 1 and Assignment.objects.get() == first


def test_a_real_account_meets_no_quiz_item_of_its_earlier_landings():
    campaign = demo_shaped(workers_per_hit=1)  # hand-made: the claim chooses the HIT
    seen: set[int] = set()
    for n in range(5):
        browser = Client(REMOTE_ADDR="192.0.2.5")
        assignment = landed(mturk(campaign, browser, "REALW", f"AS{n}"))
        quiz = set(assignment.hit.items.filter(quiz_question__isnull=False).values_list("quiz_question_id", flat=True))
        assert quiz and not quiz & seen  # none it was shown (and, once confirmed, told the answer of)
        seen |= quiz
        submit_through_pages(browser, assignment)
        confirm_platform_submission(assignment)


# --- what the researcher sees and releases ------------------------------------------------------


def test_the_researcher_sees_what_unproven_work_holds_and_releases_it(researcher):
    campaign = demo_shaped()
    for n, address in enumerate(attacker_addresses(9)):
        landed(mturk(campaign, Client(REMOTE_ADDR=address), f"FAKE{n}", f"AS{n}"))
    staff = Client()
    staff.force_login(researcher)
    page = staff.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert 'data-figure="unproven-seats">9<' in page and 'id="release-unproven"' in page
    response = staff.post(reverse("labeling:campaign_release_unproven", args=[campaign.pk]), follow=True)
    assert "Released 9 seats" in response.content.decode()
    assert free_seats(campaign) == 42 and Assignment.objects.filter(status=Assignment.EXPIRED).count() == 9
    page = staff.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="release-unproven"' not in page


def test_only_staff_release(annotators):
    campaign = demo_shaped()
    landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.5"), "FAKE", "AS1"))
    browser = Client()
    browser.force_login(annotators[0])
    assert browser.post(reverse("labeling:campaign_release_unproven", args=[campaign.pk])).status_code in (302, 403)
    assert free_seats(campaign) == 41


def test_site_workers_claim_as_before(annotators):
    campaign = demo_shaped()
    worker = worker_for_user(annotators[0])
    first = claim_next_hit(worker, campaign)
    answer_everything(first)
    submit_assignment(first)
    second = claim_next_hit(worker, campaign)  # a site worker takes HIT after HIT
    assert second is not None and second.hit_id != first.hit_id and not second.unproven


def test_beat_sweeps_lapsed_seats_every_configured_minutes(clock, monkeypatch):
    from config.celery import app
    from jobs import runtime

    monkeypatch.setattr(runtime, "_queue", lambda job_id, queue: None)  # run below, in-process

    entry = app.conf.beat_schedule["free lapsed seats"]
    assert tuple(entry["args"]) == ("labeling.free_lapsed_seats", {}) and entry["schedule"] == 5 * 60
    campaign = demo_shaped()
    landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.5"), "FAKE", "AS1"))
    clock.advance(TIME_LIMIT * 60 + 1)
    runtime.run_job(runtime.start_scheduled("labeling.free_lapsed_seats", {}))
    assert free_seats(campaign) == 42


def test_a_submitted_phantom_place_is_left_to_the_sync(clock, settings):
    settings.PLATFORM_UNCONFIRMED_GRACE_MINUTES = 15
    campaign = on_mturk(demo_shaped())
    browser = Client(REMOTE_ADDR="192.0.2.5")
    place = landed(mturk(campaign, browser, "W1", "AS1", campaign.hits.first()))
    submit_through_pages(browser, place)
    clock.advance((TIME_LIMIT + 15) * 60 + 1)
    assert expire_stale_assignments() == 0  # it holds no seat: nothing to give back, real work kept
    assert Assignment.objects.get(pk=place.pk).status == Assignment.SUBMITTED and free_seats(campaign) == 42


# --- issue 46: a shared address counts what it holds, not what it was refused -----------------------

SHARED = "192.0.2.77"  # a university's or a mobile carrier's one public address


def test_an_honest_prolific_participant_behind_refused_made_up_sessions_still_gets_a_hit(clock):
    campaign = on_prolific(demo_shaped())
    made_up = [
        Client(REMOTE_ADDR=SHARED)
        .get(prolific_landing(campaign, worker=f"F{n}", session=f"M{n}", study=STUDY, made_up=True))
        .status_code
        for n in range(12)
    ]
    # in a session's first minutes Prolific's 404 is asked again on a reload (RECHECK_WINDOW), so the
    # made-up landings poll (202) rather than get a 403; their refusals count toward the caps meanwhile
    assert made_up[:10] == [202] * 10 and prolific_checks.refusals_capped(SHARED)
    browser = Client(REMOTE_ADDR=SHARED)
    honest = prolific_landing(campaign, worker="HONEST", session="REAL", study=STUDY)
    assert browser.get(honest).status_code == 202  # the page polls while the last refusal holds the turn
    clock.advance(prolific_checks.REFUSED_TURN.total_seconds())
    assert landed(browser.get(honest)).worker.external_id == "HONEST"
    assert not Assignment.objects.exclude(worker__external_id="HONEST").exists()


def test_an_honest_mturk_worker_behind_made_up_landings_that_hold_nothing_now_still_gets_a_hit(clock, settings):
    campaign = on_mturk(demo_shaped())
    hit = campaign.hits.first()
    cap = settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR
    for n in range(cap):  # made-up ids take phantom places, then walk away
        landed(mturk(campaign, Client(REMOTE_ADDR=SHARED), f"FAKE{n}", f"FAKEAS{n}", hit))
    assert mturk(campaign, Client(REMOTE_ADDR=SHARED), "HONEST0", "REAL0", hit).status_code == 429  # held: the cap
    clock.advance(TIME_LIMIT * 60 + 1)  # their places lapse: the address holds nothing (it once waited the hour)
    honest = landed(mturk(campaign, Client(REMOTE_ADDR=SHARED), "HONEST1", "REAL1", hit))
    assert honest.worker.external_id == "HONEST1" and honest.hit_id == hit.pk


def test_refused_mturk_landings_count_only_while_they_could_still_be_claiming(clock, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 3
    campaign = on_mturk(demo_shaped())
    hit = campaign.hits.first()
    first = landed(mturk(campaign, Client(REMOTE_ADDR=SHARED), "SAME", "AS1", hit))
    # the same worker id under two more assignment ids of that HIT: refused, holding nothing
    for n in (2, 3):
        assert mturk(campaign, Client(REMOTE_ADDR=SHARED), "SAME", f"AS{n}", hit).status_code == 409
    assert mturk(campaign, Client(REMOTE_ADDR=SHARED), "HONEST", "REAL", hit).status_code == 429
    clock.advance(workers.CLAIMING.total_seconds() + 1)  # the refused ones are not claiming any more
    assert landed(mturk(campaign, Client(REMOTE_ADDR=SHARED), "HONEST", "REAL", hit)).worker.external_id == "HONEST"
    assert first.worker.external_id == "SAME"


def test_many_made_up_ids_from_one_address_hold_no_more_than_the_cap(clock, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 4
    hand_made = demo_shaped()  # made-up landings take real seats here
    for _round in range(3):
        statuses = [
            mturk(hand_made, Client(REMOTE_ADDR=SHARED), f"F{_round}X{n}", f"AS{_round}X{n}").status_code
            for n in range(7)
        ]
        assert statuses == [302] * 4 + [429] * 3
        held = Assignment.objects.filter(status=Assignment.ACCEPTED, expires_at__gt=timezone.now())
        assert held.filter(worker__signup_ip=SHARED).count() == 4  # never more than the cap at once
        clock.advance(TIME_LIMIT * 60 + 1)
        expire_stale_assignments()
    assert free_seats(hand_made) == 42  # every seat they took came back
