"""A Prolific landing's check runs as a job, never in the web request (labeling.platforms.prolific_checks):
the landing answers at once with a page that polls, one job per session id is queued, and the
next poll reads the answer the job stored in the database. Here jobs are held in the queue until a
test runs them, and Prolific is the stateful stand-in (labeling.platforms.standin), faults and all.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from jobs.models import JobRun
from jobs.registry import get as job_spec
from jobs.tasks import run_job_task
from labeling.models import Assignment, ProlificSessionCheck, Publication, Worker
from labeling.platforms import calls, prolific_checks, standin
from labeling.platforms.standin.faults import SERVER, THROTTLED, TIMEOUT, FaultPlan
from labeling.platforms.standin.prolific import RETRY_AFTER_SECONDS, ProlificStandIn, Submission
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign
from tests.labeling.platform_helpers import prolific_landing

STUDY = "60jobstudy000000000000000"
ADDRESS = "192.0.2.1"


@pytest.fixture
def queued(monkeypatch) -> list[int]:
    """The ids of the jobs queued, held until the test runs them (no worker picks them up)."""
    from jobs import runtime

    held: list[int] = []
    monkeypatch.setattr(runtime, "_queue", lambda job_id, queue: held.append(job_id))
    return held


@pytest.fixture
def prolific(monkeypatch):
    """The Prolific stand-in at the adapter's transport point; the backoff's waits recorded, not slept."""
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "unused-by-the-stand-in")
    platform = ProlificStandIn()
    standin.install(platform)
    platform.slept = []
    monkeypatch.setattr(calls, "sleep", platform.slept.append)
    yield platform
    standin.uninstall()


@pytest.fixture
def campaign(db, settings):
    settings.QUIZ_DEMO_BANK = True
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(4), seed=5)
    Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=STUDY)
    return campaign


def started(prolific: ProlificStandIn, session: str, participant: str) -> None:
    """The participant opened the study on Prolific: an active submission of the study."""
    prolific.submissions[session] = Submission(session, STUDY, participant, status="ACTIVE")


def later(seconds: float, *, since_landing: float = 0) -> None:
    """Time passes for the stored checks: their answers are `seconds` older, their first landing
    `since_landing` seconds older still."""
    back = timedelta(seconds=seconds)
    ProlificSessionCheck.objects.update(answered_at=timezone.now() - back)
    if since_landing:
        ProlificSessionCheck.objects.update(created_at=timezone.now() - back - timedelta(seconds=since_landing))


def run(job_ids: list[int]) -> None:
    """A worker takes the queued jobs."""
    while job_ids:
        run_job_task.apply(args=[job_ids.pop(0)])


def test_the_landing_answers_at_once_and_the_poll_after_the_job_lands(campaign, prolific, queued):
    started(prolific, "S1", "P1")
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    first = browser.get(link)
    assert first.status_code == 202 and "Checking your Prolific session" in first.content.decode()
    assert prolific.requests == [] and len(queued) == 1  # Prolific not asked in the request; one job queued
    assert not Worker.objects.exists() and not Assignment.objects.exists() and "_auth_user_id" not in browser.session
    assert browser.get(link).status_code == 202 and len(queued) == 1  # a reload queues no second job
    assert JobRun.objects.get().kind == "labeling.check_prolific_session"
    run(queued)
    landed = browser.get(link)
    assert landed.status_code == 302 and Assignment.objects.filter(worker__external_id="P1").count() == 1
    assert len(prolific.requests) == 1 and not queued
    check = ProlificSessionCheck.objects.get()
    assert (check.status, check.refusal, check.submission_status) == (ProlificSessionCheck.ANSWERED, "", "ACTIVE")


def test_a_made_up_session_is_refused_once_prolific_still_does_not_list_it_after_the_first_minutes(
    campaign, prolific, queued
):
    link = prolific_landing(campaign, worker="P1", session="MADEUP", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    assert browser.get(link).status_code == 202
    run(queued)
    # a first 404 may be Prolific's listing lagging the session's start: not final yet
    pending = browser.get(link)
    assert pending.status_code == 202 and "could not be reached" not in pending.content.decode()
    assert ProlificSessionCheck.objects.get().refusal == "no such session"  # the address's cap counts it
    assert not queued  # asked again no sooner than RECHECK_AFTER
    later(5, since_landing=prolific_checks.RECHECK_WINDOW.total_seconds())
    assert browser.get(link).status_code == 202 and len(queued) == 1
    run(queued)
    refused = browser.get(link)
    assert refused.status_code == 403 and "no such session" in refused.content.decode()
    assert not Worker.objects.exists() and len(prolific.requests) == 2


def test_a_real_participant_whose_first_check_answered_404_gets_a_hit_on_a_reload(campaign, prolific, queued):
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    browser.get(link)
    run(queued)  # Prolific does not list the session yet: 404
    assert browser.get(link).status_code == 202 and not queued
    later(2)
    assert browser.get(link).status_code == 202 and not queued  # under 5 s: not asked again yet
    started(prolific, "S1", "P1")  # Prolific lists it now
    later(5)
    assert browser.get(link).status_code == 202 and len(queued) == 1
    run(queued)
    assert browser.get(link).status_code == 302 and Assignment.objects.filter(worker__external_id="P1").count() == 1
    assert ProlificSessionCheck.objects.get().refusal == ""


def test_an_undocumented_status_within_the_first_minutes_is_asked_again(campaign, prolific, queued):
    started(prolific, "S1", "P1")
    prolific.submissions["S1"].status = "PROCESSING"  # a word Prolific's reference does not document
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    browser.get(link)
    run(queued)
    assert ProlificSessionCheck.objects.get().status == ProlificSessionCheck.FAILED
    prolific.submissions["S1"].status = "ACTIVE"
    later(5)
    browser.get(link)
    run(queued)
    assert browser.get(link).status_code == 302


def test_the_landing_check_runs_on_a_queue_no_other_job_uses():
    from jobs.registry import all_specs

    queues = {spec.kind: spec.queue for spec in all_specs()}
    assert queues[prolific_checks.JOB] == "landing"
    assert [kind for kind, queue in queues.items() if queue == "landing"] == [prolific_checks.JOB]


def test_one_try_waits_the_configured_read_timeout(settings):
    from labeling.platforms.prolific import landing_timeout

    settings.PROLIFIC_LANDING_TIMEOUT_SECONDS = 12.5
    assert landing_timeout()[1] == 12.5


def test_someone_elses_session_id_does_not_spoil_the_owners_landing(campaign, prolific, queued):
    started(prolific, "S1", "OWNER")
    thief = prolific_landing(campaign, worker="THIEF", session="S1", study=STUDY, made_up=True)
    assert Client(REMOTE_ADDR="198.51.100.9").get(thief).status_code == 202
    run(queued)
    assert Client(REMOTE_ADDR="198.51.100.9").get(thief).status_code == 403
    owner = prolific_landing(campaign, worker="OWNER", session="S1", study=STUDY, made_up=True)
    assert Client(REMOTE_ADDR=ADDRESS).get(owner).status_code == 302  # the stored answer, judged for the owner
    assert len(prolific.requests) == 1 and Worker.objects.filter(external_id="THIEF").count() == 0


def test_a_flood_of_made_up_sessions_queues_no_more_checks_than_the_address_cap(campaign, prolific, queued, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 3
    links = [prolific_landing(campaign, worker=f"F{n}", session=f"M{n}", study=STUDY, made_up=True) for n in range(8)]
    statuses = [Client(REMOTE_ADDR="203.0.113.7").get(link).status_code for link in links]
    assert statuses == [202] * 8 and len(queued) == 3 and ProlificSessionCheck.objects.count() == 3
    run(queued)  # Prolific refuses the three: the address is past its cap of refused sessions
    pages = [Client(REMOTE_ADDR="203.0.113.7").get(link) for link in links]
    # asked one session at a time now, the last refusal holding the turn: every page polls, none is
    # asked (the three refused are within their first minutes, when a 404 is asked again on a reload
    # at least RECHECK_AFTER later: they poll too)
    assert [page.status_code for page in pages] == [202] * 8
    assert "checked one at a time" in pages[-1].content.decode()
    assert not queued and len(prolific.requests) == 3
    # a real session from another address is queued and lands as before
    started(prolific, "S1", "P1")
    honest = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    assert Client(REMOTE_ADDR=ADDRESS).get(honest).status_code == 202
    run(queued)
    assert Client(REMOTE_ADDR=ADDRESS).get(honest).status_code == 302


def test_an_honest_participant_behind_an_address_of_refused_sessions_still_gets_a_hit(
    campaign, prolific, queued, settings
):
    """Issue 46: after a flood of made-up sessions from a university's or a carrier's one address,
    the participants behind it waited a 429 for the hour. What the address was refused no longer
    shuts it: past its refused sessions' caps it is asked one session at a time."""
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 3
    shared = "203.0.113.7"
    for n in range(6):  # more made-up sessions than the cap, each refused
        link = prolific_landing(campaign, worker=f"F{n}", session=f"M{n}", study=STUDY, made_up=True)
        Client(REMOTE_ADDR=shared).get(link)
        run(queued)
        ProlificSessionCheck.objects.update(answered_at=timezone.now() - prolific_checks.REFUSED_TURN)
    assert ProlificSessionCheck.objects.exclude(refusal="").count() == 6 and prolific_checks.refusals_capped(shared)
    started(prolific, "S1", "P1")
    browser = Client(REMOTE_ADDR=shared)
    honest = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    assert browser.get(honest).status_code == 202 and len(queued) == 1  # its turn: asked at once
    run(queued)
    assert browser.get(honest).status_code == 302
    assert Assignment.objects.get().worker.external_id == "P1"


def test_an_address_past_its_refused_sessions_holds_one_check_at_a_time(campaign, prolific, queued, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 2
    shared = "203.0.113.7"
    for n in range(2):
        Client(REMOTE_ADDR=shared).get(prolific_landing(campaign, worker=f"F{n}", session=f"M{n}", study=STUDY))
    run(queued)
    ProlificSessionCheck.objects.update(answered_at=timezone.now() - prolific_checks.REFUSED_TURN)
    links = [prolific_landing(campaign, worker=f"G{n}", session=f"N{n}", study=STUDY) for n in range(4)]
    assert [Client(REMOTE_ADDR=shared).get(link).status_code for link in links] == [202] * 4
    assert len(queued) == 1  # one in flight, not the cap of two: the others wait their turn
    run(queued)  # refused: that refusal holds the turn for REFUSED_TURN
    assert Client(REMOTE_ADDR=shared).get(links[1]).status_code == 202 and not queued
    ProlificSessionCheck.objects.update(answered_at=timezone.now() - prolific_checks.REFUSED_TURN)
    assert Client(REMOTE_ADDR=shared).get(links[1]).status_code == 202 and len(queued) == 1


def test_participants_behind_one_address_wait_a_poll_past_the_in_flight_cap_and_all_land(
    campaign, prolific, queued, settings
):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 2
    links = []
    for n in range(4):
        started(prolific, f"S{n}", f"P{n}")
        links.append(prolific_landing(campaign, worker=f"P{n}", session=f"S{n}", study=STUDY, made_up=True))
    browsers = [Client(REMOTE_ADDR=ADDRESS) for _ in links]
    assert [b.get(link).status_code for b, link in zip(browsers, links, strict=True)] == [202] * 4
    assert len(queued) == 2
    for _round in range(2):  # each poll after the jobs ran: two land, the other two queue their checks
        run(queued)
        [b.get(link) for b, link in zip(browsers, links, strict=True)]
    assert Assignment.objects.filter(worker__platform=Worker.PROLIFIC).count() == 4


@pytest.mark.parametrize("fault", [THROTTLED, SERVER, TIMEOUT])
def test_the_job_asks_again_with_backoff_after_a_fault(campaign, prolific, queued, fault):
    started(prolific, "S1", "P1")
    prolific.faults = FaultPlan(at={1: fault, 2: fault})
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    assert browser.get(link).status_code == 202
    run(queued)
    assert len(prolific.requests) == 1 and prolific.faults.calls == 3  # the third try answered
    assert len(prolific.slept) == 2
    if fault == THROTTLED:
        assert min(prolific.slept) >= float(RETRY_AFTER_SECONDS)  # Prolific's Retry-After is waited
    assert browser.get(link).status_code == 302


def test_a_check_that_failed_every_try_fails_closed_and_the_next_poll_asks_again(campaign, prolific, queued, settings):
    settings.PLATFORM_RETRY_ATTEMPTS = 3
    started(prolific, "S1", "P1")
    prolific.faults = FaultPlan(at={1: SERVER, 2: TIMEOUT, 3: THROTTLED})
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    browser.get(link)
    run(queued)
    check = ProlificSessionCheck.objects.get()
    assert check.status == ProlificSessionCheck.FAILED and "429" in check.error
    assert browser.get(link).status_code == 202 and not queued  # not asked again within 5 s
    later(5)
    page = browser.get(link)  # the poll: Prolific could not be reached, nothing created, asked again
    assert page.status_code == 202 and "could not be reached" in page.content.decode()
    assert not Worker.objects.exists() and len(queued) == 1
    assert browser.get(link).status_code == 202 and len(queued) == 1  # once
    run(queued)
    assert browser.get(link).status_code == 302


def test_checks_whose_jobs_were_lost_do_not_hold_the_addresss_share_of_the_queue(campaign, prolific, queued, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 2
    for n in range(2):  # two sessions whose participants left while their jobs were lost
        Client(REMOTE_ADDR=ADDRESS).get(prolific_landing(campaign, worker=f"L{n}", session=f"L{n}", study=STUDY))
    queued.clear()
    started(prolific, "S1", "P1")
    honest = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    assert Client(REMOTE_ADDR=ADDRESS).get(honest).status_code == 202 and not queued  # two in flight: wait
    ProlificSessionCheck.objects.update(queued_at=timezone.now() - prolific_checks.STALE_AFTER - timedelta(seconds=1))
    assert Client(REMOTE_ADDR=ADDRESS).get(honest).status_code == 202 and len(queued) == 1
    run(queued)
    assert Client(REMOTE_ADDR=ADDRESS).get(honest).status_code == 302


def test_a_check_whose_job_was_lost_is_queued_again_by_a_poll(campaign, prolific, queued):
    started(prolific, "S1", "P1")
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    browser.get(link)
    queued.clear()  # the broker lost the message
    browser.get(link)
    assert not queued  # still young: its job may be on its way
    ProlificSessionCheck.objects.update(queued_at=timezone.now() - prolific_checks.STALE_AFTER - timedelta(seconds=1))
    browser.get(link)
    assert len(queued) == 1
    run(queued)
    assert browser.get(link).status_code == 302


def test_a_poll_while_the_check_waits_only_reads_and_a_blocked_id_is_still_refused(campaign, prolific, queued):
    """Every waiting participant's page polls every CHECK_AGAIN_SECONDS (200 of them: about 100 polls
    a second), so a poll of a queued check reads it and answers the page: no write, no count of the
    address's caps, no second job; the block still comes first."""
    started(prolific, "S1", "P1")
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    browser.get(link)
    with CaptureQueriesContext(connection) as poll:
        assert browser.get(link).status_code == 202
    statements = [query["sql"] for query in poll.captured_queries]
    # the caps select by address block (network, site_network; signup_network for identities)
    by_address = [sql for sql in statements if "network" in sql.partition(" WHERE ")[2]]
    assert statements and all(sql.startswith("SELECT") for sql in statements) and not by_address, statements
    assert len(queued) == 1 and prolific.requests == []
    Worker.objects.create(platform=Worker.PROLIFIC, external_id="P1", status=Worker.BLOCKED)
    assert browser.get(link).status_code == 403


def test_a_second_run_of_the_same_check_asks_prolific_no_more(campaign, prolific, queued):
    started(prolific, "S1", "P1")
    Client(REMOTE_ADDR=ADDRESS).get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True))
    assert prolific_checks.run_check("S1")["status"] == ProlificSessionCheck.ANSWERED
    assert prolific_checks.run_check("S1") == {"session": "S1", "skipped": ProlificSessionCheck.ANSWERED}
    assert len(prolific.requests) == 1


def test_the_job_takes_a_session_id_only():
    spec = job_spec("labeling.check_prolific_session")
    assert spec.validate({"session_id": "64abc"}) == {"session_id": "64abc"}
    with pytest.raises(ValueError):
        spec.validate({"session_id": "../../etc"})


def test_the_jobs_tries_stop_before_a_waiting_check_counts_as_lost(campaign, prolific, queued, settings, monkeypatch):
    settings.PLATFORM_RETRY_ATTEMPTS = 50
    settings.PROLIFIC_LANDING_TIMEOUT_SECONDS = 30
    clock = [1000.0]
    monkeypatch.setattr(prolific_checks.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(calls, "sleep", lambda seconds: clock.__setitem__(0, clock[0] + seconds))
    prolific.faults = FaultPlan(rate=1.0, seed=3)  # Prolific never answers
    started(prolific, "S1", "P1")
    browser = Client(REMOTE_ADDR=ADDRESS)
    browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True))
    run(queued)
    waited = clock[0] - 1000.0
    # the last try starts early enough to end (a try may wait connect + read) before STALE_AFTER
    assert waited + 3.05 + 30 <= prolific_checks.STALE_AFTER.total_seconds()
    assert 1 < prolific.faults.calls < 50
    assert ProlificSessionCheck.objects.get().status == ProlificSessionCheck.FAILED


def test_the_poll_that_lands_makes_its_identity_proven_and_its_seat_bound_as_it_writes_them(campaign, prolific, queued):
    """What every participant of a launch burst sends once (issue 46): the identity is made merged
    into the id's proven Worker and the seat made bound to the session, each by its INSERT (no
    UPDATE after); the sign-in writes its session row once and no log of a password never used."""
    started(prolific, "S1", "P1")
    link = prolific_landing(campaign, worker="P1", session="S1", study=STUDY, made_up=True)
    browser = Client(REMOTE_ADDR=ADDRESS)
    assert browser.get(link).status_code == 202
    run(queued)
    with CaptureQueriesContext(connection) as poll:
        assert browser.get(link).status_code == 302
    statements = [query["sql"] for query in poll.captured_queries]
    updates = [sql for sql in statements if sql.startswith("UPDATE")]
    # the one UPDATE of a new identity's row is its account's; Django's sign-in sets last_login
    assert not [sql for sql in updates if "merged_into" in sql or '"labeling_assignment"' in sql], updates
    assert not [sql for sql in statements if "axes_" in sql], statements
    identity = Worker.objects.get(external_id="P1", landing_key="S1")
    assert identity.merged_into == Worker.objects.get(external_id="P1", landing_key="")
    (assignment,) = Assignment.objects.filter(worker=identity)
    assert assignment.platform_assignment_id == "S1" and not assignment.unproven
