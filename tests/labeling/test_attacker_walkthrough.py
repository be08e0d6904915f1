"""An attacker's walk through the crowd side, step by step; every step must fail.

The attacker wants to decide an item's gold label and collect payments: forge landing links, make
up worker ids to take every seat of an item, sign a victim's browser into their worker, and keep
using a session after logging out.
"""

from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from labeling.actions.submit import submit_assignment
from labeling.models import AggregatedLabel, Assignment, PaymentEntry, Worker
from labeling.reports.campaign import campaign_report
from labeling.services.entry_tokens import publication_token
from labeling.services.payments import approve_submitted, record_payments
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank


def link(campaign, worker: str, token: str | None) -> str:
    params = {
        "campaign": campaign.pk,
        "hit": campaign.hits.first().pk,
        "assignmentId": f"AS{worker}",
        "hitId": "HIT1",
        "workerId": worker,
        "turkSubmitTo": "https://www.mturk.com",
    }
    if token is not None:
        params["token"] = token
    return f"{reverse('labeling:platform_mturk')}?{urlencode(params)}"


def test_the_attackers_walk_fails_at_every_step(settings, annotators):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 3
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, workers_per_hit=3)
    build_hits(campaign, make_dialogues(2), seed=3)  # one HIT, three seats

    # 1. Forge a link: no token, a guessed token. Nothing is created.
    attacker = Client(REMOTE_ADDR="203.0.113.66")
    assert attacker.get(link(campaign, "FAKE1", None)).status_code == 403
    assert attacker.get(link(campaign, "FAKE1", "guessed-" + "0" * 24)).status_code == 403
    assert not Worker.objects.exists() and not get_user_model().objects.filter(username__startswith="mturk-").exists()

    # 2. With a real link's token (copied from a real HIT), make up workers for every seat.
    fakes = []
    for n in range(3):
        browser = Client(REMOTE_ADDR="203.0.113.66")
        assert browser.get(link(campaign, f"FAKE{n}", publication_token(campaign, Worker.MTURK))).status_code == 302
        fakes.append(browser)
    # a fourth made-up worker from the same address is refused, and creates nothing
    assert (
        Client(REMOTE_ADDR="203.0.113.66")
        .get(link(campaign, "FAKE9", publication_token(campaign, Worker.MTURK)))
        .status_code
        == 429
    )
    assert Worker.objects.count() == 3
    for assignment in Assignment.objects.all():
        answer_everything(assignment)
        submit_assignment(assignment)

    # ...but made-up workers are never confirmed by the platform: their answers stay pending,
    # out of the gold label and out of the payments.
    aggregate_campaign(campaign)
    assert not AggregatedLabel.objects.exists()
    assert approve_submitted(campaign) == 0
    record_payments(campaign)
    assert not PaymentEntry.objects.exists()
    assert campaign_report(campaign)["progress"]["assignments_pending"] == 3

    # 3. Sign a victim's browser into a made-up worker with a link: it asks first, switches nothing.
    victim = Client(REMOTE_ADDR="198.51.100.20")
    victim.force_login(annotators[0])
    assert victim.get(link(campaign, "FAKE0", publication_token(campaign, Worker.MTURK))).status_code == 200
    assert victim.session["_auth_user_id"] == str(annotators[0].pk)

    # 4. Log out and reuse the old session cookie: the session is gone.
    browser = fakes[0]
    stolen = browser.cookies["sessionid"].value
    home = reverse("labeling:worker_home")
    assert browser.get(home).status_code == 200
    browser.post(reverse("logout"))
    replay = Client(REMOTE_ADDR="203.0.113.66")
    replay.cookies["sessionid"] = stolen
    response = replay.get(home)
    assert response.status_code == 302 and reverse("login") in response["Location"]
