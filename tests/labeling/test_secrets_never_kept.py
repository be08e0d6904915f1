"""No secret the project holds is kept or shown, whatever an outside service sends back.

Each secret (the model endpoint's API key, the Hub token, the Prolific token, the AWS keys) goes
through each error path of each adapter: a model endpoint that echoes the bearer key and the
secret in its 401, 429 and 500 bodies, in a body that is no chat completion and in a reply that
names no label; Prolific answering 401 with the token header echoed back; MTurk refusing with the
secret in its error message; the Hub refusing a push with both in its body. Then no database row
(every text column of every table), no captured log line and no page (the study report, the
campaign page, the job's page) holds any of them."""

import json
import logging
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
import responses
from botocore.stub import Stubber
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from jobs.models import JobRun
from jobs.runtime import start_job
from labeling.models import HIT, Campaign, Publication, RaterAnswer
from labeling.platforms import PlatformError, mturk
from labeling.platforms.prolific import API
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers
from tests.labeling.platform_helpers import draft_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("run_jobs_at_once", "quiz_demo_bank")]

# opaque values (no credential's usual shape), so only knowing them can scrub them
SECRETS = {
    "MODEL_RATER_API_KEY": "rater-opaque-3f9a1c7e",
    "HUB_TOKEN": "hub-opaque-8d2b6e4a",
    "PROLIFIC_API_TOKEN": "prolific-opaque-5c1d9f0b",
    "AWS_ACCESS_KEY_ID": "aws-id-opaque-2e7a4b",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-opaque-6f3c8d1a",
}
ENVIRONMENT = ("PROLIFIC_API_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


@pytest.fixture
def project_secrets(settings, monkeypatch):
    settings.MODEL_RATER_API_KEY = SECRETS["MODEL_RATER_API_KEY"]
    settings.HUB_TOKEN = SECRETS["HUB_TOKEN"]
    for name in ENVIRONMENT:
        monkeypatch.setenv(name, SECRETS[name])
    return SECRETS


def echo(authorization: str, leak: str) -> str:
    return f"Invalid credentials: you sent Authorization: {authorization}; known key {leak}"


class EchoingServer:
    """An HTTP service that refuses, echoing back the Authorization header it was sent and a
    secret it was told to leak (as a misconfigured proxy or a chatty server would). The model
    endpoint's answer depends on a word in the last message, so each of its error paths is met."""

    def __init__(self, leak: str) -> None:
        self.leak = leak
        self.sent: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(b"")

            def do_POST(self) -> None:
                self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _answer(self, body: bytes) -> None:
                status, payload = server.answer(self.path, self.headers.get("Authorization", ""), body)
                raw = payload.encode()
                server.sent.append(payload)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def echo(self, authorization: str) -> str:
        return echo(authorization, self.leak)

    def answer(self, path: str, authorization: str, body: bytes) -> tuple[int, str]:
        if not path.endswith("/chat/completions"):  # the Hub, any of its calls
            return 401, json.dumps({"error": self.echo(authorization)})
        last = json.loads(body)["messages"][-1]["content"]
        word = next((w for w in ("E429", "E500", "GARBAGE", "NOLABEL") if w in last), "E401")
        if word == "GARBAGE":
            return 200, f"<html>{self.echo(authorization)}</html>"
        if word == "NOLABEL":
            content = f"I cannot say. {self.echo(authorization)}"
            return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
        status = {"E401": 401, "E429": 429, "E500": 500}[word]
        return status, json.dumps({"error": {"message": self.echo(authorization)}})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(params=sorted(SECRETS))
def leaked(request, project_secrets):
    """Each secret in turn, leaked by every service of the test."""
    return request.param, SECRETS[request.param]


@pytest.fixture
def echoing(leaked):
    server = EchoingServer(leaked[1])
    yield server
    server.close()


def test_a_model_endpoint_echoing_secrets_leaves_them_nowhere(echoing, leaked, settings, client, researcher, caplog):
    caplog.set_level(logging.DEBUG)
    settings.MODEL_RATER_ENDPOINT_URL, settings.MODEL_RATER_MODEL = f"{echoing.url}/v1", "echo-chat"
    settings.MODEL_RATER_MAX_RETRIES, settings.MODEL_RATER_FEW_SHOT, settings.STUDY_REPORT_RESAMPLES = 0, 0, 20
    campaign = Campaign.objects.create(name="Rated", workers_per_hit=3)
    dialogues = make_dialogues(5)
    make_answered_hit(campaign, make_workers(3), {d: ["Sad", "Sad", "Angry"] for d in dialogues})
    aggregate_campaign(campaign)
    for dialogue, word in zip(dialogues, ("E401", "E429", "E500", "GARBAGE", "NOLABEL"), strict=True):
        turn = dialogue.turns.order_by("-position").first()
        turn.text = word
        turn.save()
    job = start_job("labeling.model_rater", {"campaign_id": campaign.pk}, user=researcher)
    statuses = set(RaterAnswer.objects.filter(campaign=campaign).values_list("status", flat=True))
    assert statuses == {"http-error", "rate-limited", "malformed"}, JobRun.objects.get(pk=job.pk).error
    assert all(leaked[1] in sent for sent in echoing.sent)  # the service did send it back
    client.force_login(researcher)
    pages = [reverse("labeling:study_report", args=[campaign.pk]), reverse("jobs:job_detail", args=[job.pk])]
    shown = _pages(client, pages)
    assert "HTTP 401" in shown and "not a chat completion" in shown  # the page shows the errors, cleaned
    _assert_nowhere(SECRETS.values(), shown, caplog.text)


def test_prolific_echoing_its_token_leaves_no_secret(leaked, client, researcher, caplog):
    caplog.set_level(logging.DEBUG)
    campaign, publication = _published(Publication.PROLIFIC, "60aaaaaaaaaaaaaaaaaaaaaa")

    def refuse(request):  # `responses` answers behind the adapter's real session (its token header)
        return 401, {}, json.dumps({"error": {"detail": echo(request.headers.get("Authorization", ""), leaked[1])}})

    with responses.RequestsMock() as api:
        api.add_callback(responses.GET, re.compile(rf"{re.escape(API)}/.*"), callback=refuse)
        with pytest.raises(PlatformError):  # the job fails, as a platform error fails it
            start_job("labeling.platform_sync", {"campaign_id": campaign.pk}, user=researcher)
        assert api.calls and f"Token {SECRETS['PROLIFIC_API_TOKEN']}" in api.calls[0].request.headers["Authorization"]
    publication.refresh_from_db()
    job = JobRun.objects.get(kind="labeling.platform_sync")
    assert "401" in publication.last_sync_error and job.status == JobRun.FAILED and "401" in job.error
    client.force_login(researcher)
    shown = _pages(
        client, [reverse("labeling:campaign_detail", args=[campaign.pk]), reverse("jobs:job_detail", args=[job.pk])]
    )
    _assert_nowhere(SECRETS.values(), shown, caplog.text)


def test_mturk_echoing_a_secret_leaves_it_nowhere(leaked, client, researcher, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    campaign, publication = _published(Publication.MTURK, "3HITTYPE")
    boto = boto3.client("mturk", region_name="us-east-1", endpoint_url=mturk.SANDBOX_ENDPOINT)
    monkeypatch.setattr(mturk, "make_client", lambda sandbox=True: boto)
    message = f"The security token included in the request is invalid: {leaked[1]}"
    with Stubber(boto) as stub:
        stub.add_client_error("list_assignments_for_hit", "RequestError", message, http_status_code=403)
        with pytest.raises(PlatformError):
            start_job("labeling.platform_sync", {"campaign_id": campaign.pk}, user=researcher)
        stub.assert_no_pending_responses()
    publication.refresh_from_db()
    job = JobRun.objects.get(kind="labeling.platform_sync")
    assert "RequestError" in publication.last_sync_error and "security token" in job.error
    client.force_login(researcher)
    shown = _pages(
        client, [reverse("labeling:campaign_detail", args=[campaign.pk]), reverse("jobs:job_detail", args=[job.pk])]
    )
    _assert_nowhere(SECRETS.values(), shown, caplog.text)


def test_the_hub_echoing_its_token_leaves_no_secret(echoing, leaked, settings, tmp_path, capsys, caplog, monkeypatch):
    from huggingface_hub import constants

    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the Hub here is the server on 127.0.0.1
    monkeypatch.setattr(constants, "ENDPOINT", echoing.url)
    settings.HUB_ENDPOINT = echoing.url
    (tmp_path / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n")
    with pytest.raises(CommandError, match="401") as refused:
        call_command("push_dataset", "lab/x", folder=str(tmp_path))
    assert any(f"Bearer {SECRETS['HUB_TOKEN']}" in sent for sent in echoing.sent)
    out = capsys.readouterr()
    assert "\n" not in str(refused.value)
    _assert_nowhere(SECRETS.values(), str(refused.value) + out.out + out.err, caplog.text)


def test_the_database_scan_finds_a_planted_secret(db):
    """The scan below reads every table: a secret written anywhere (text or JSON) is found."""
    campaign = Campaign.objects.create(name="Planted")
    Publication.objects.create(campaign=campaign, platform="mturk", last_sync_error="planted-in-text")
    JobRun.objects.create(kind="labeling.model_rater", parameters={"note": "planted-in-json"})
    assert _rows_holding("planted-in-text") == ["labeling_publication"]
    assert _rows_holding("planted-in-json") == ["jobs_jobrun"]


# --- helpers ---------------------------------------------------------------------------------------


def _published(platform: str, external_id: str) -> tuple[Campaign, Publication]:
    campaign = draft_campaign(hits=1, status=Campaign.OPEN)
    HIT.objects.filter(campaign=campaign).update(external_id="3HITONE")
    publication = Publication.objects.create(
        campaign=campaign, platform=platform, external_id=external_id, status=Publication.ACTIVE, sandbox=True
    )
    return campaign, publication


def _pages(client, urls: list[str]) -> str:
    shown = ""
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        shown += response.content.decode()
    return shown


def _assert_nowhere(secrets, *texts: str) -> None:
    for secret in secrets:
        assert _rows_holding(secret) == [], f"{secret} stored"
        for text in texts:
            assert secret not in text


def _rows_holding(secret: str) -> list[str]:
    """The tables with a row holding `secret` in any column (text, JSON, bytes)."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            if any(secret in _text(value) for row in cursor.fetchall() for value in row):
                found.append(table)
    return found


def _text(value) -> str:
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("utf-8", errors="ignore")
    return value if isinstance(value, str) else json.dumps(value, default=str)
