"""The client's errors and retries, against `responses` (requests' own stand-in): a 4xx becomes a
typed error carrying the server's message; a GET is retried on a 5xx or a lost connection (it
changes nothing), a POST never (a retried create would create twice)."""

import pytest
import requests
import responses
from dialogue_curation_client import BadRequest, Client, Conflict, NotFound, PermissionDenied, ServerError
from dialogue_curation_client.errors import message_of

BASE = "http://api.example"
CAMPAIGN = {
    "id": 7, "name": "Pilot", "status": "draft", "task_type": "last_turn_label", "language": "en",
    "labels": ["Sad"], "hit_count": 2, "dialogues_per_hit": 2, "workers_per_hit": 3, "created_at": "2026-01-01T00:00:00Z",
}  # fmt: skip


@pytest.fixture
def client(monkeypatch) -> Client:
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    return Client(BASE, requests.Session(), retries=2)


def test_the_message_is_drfs_detail_or_each_field_with_its_errors():
    assert message_of({"detail": "Not found."}) == "Not found."
    assert message_of({"name": ["This field is required."], "labels": ["not labels: X"]}) == (
        "name: This field is required.; labels: not labels: X"
    )
    assert message_of({"parameters": {"campaign_id": ["required"]}}) == "parameters: campaign_id: required"


@responses.activate
def test_a_4xx_becomes_a_typed_error_with_the_servers_message(client):
    responses.post(f"{BASE}/api/campaigns/", status=400, json={"fallback_choices": ["not labels: Nope"]})
    responses.get(f"{BASE}/api/campaigns/9/", status=404, json={"detail": "No Campaign matches the given query."})
    responses.get(f"{BASE}/api/jobs/3/", status=403, json={"detail": "You do not have permission."})
    with pytest.raises(BadRequest) as refused:
        client.create_campaign("x", fallback_choices=["Nope"])
    assert refused.value.status == 400 and refused.value.field_errors == {"fallback_choices": ["not labels: Nope"]}
    assert "fallback_choices: not labels: Nope" in str(refused.value)
    with pytest.raises(NotFound, match="No Campaign matches"):
        client.campaign(9)
    with pytest.raises(PermissionDenied, match="permission"):
        client.job(3)
    assert len(responses.calls) == 3  # no 4xx is retried


@responses.activate
def test_a_get_is_retried_on_a_5xx_and_a_lost_connection(client):
    url = f"{BASE}/api/campaigns/7/"
    responses.get(url, status=503, body="busy")
    responses.get(url, body=requests.ConnectionError("reset"))
    responses.get(url, json=CAMPAIGN)
    assert client.campaign(7).name == "Pilot"
    assert len(responses.calls) == 3


@responses.activate
def test_a_get_gives_up_after_its_retries_with_a_server_error(client):
    responses.get(f"{BASE}/api/campaigns/7/", status=502, json={"detail": "Bad gateway"})
    with pytest.raises(ServerError, match="Bad gateway"):
        client.campaign(7)
    assert len(responses.calls) == 3  # the first try and two retries


@responses.activate
def test_a_post_is_never_retried(client):
    responses.post(f"{BASE}/api/campaigns/7/status/", status=500, body="boom")
    responses.post(f"{BASE}/api/campaigns/", body=requests.ConnectionError("reset"))
    with pytest.raises(ServerError):
        client.set_status(7, "open")
    with pytest.raises(requests.ConnectionError):
        client.create_campaign("Once")
    assert len(responses.calls) == 2


@responses.activate
def test_a_conflict_is_its_own_error_and_an_unexpected_answer_says_what_it_lacks(client):
    responses.get(f"{BASE}/api/jobs/4/", status=409, json={"detail": "job 4 is succeeded"})
    responses.get(f"{BASE}/api/campaigns/8/", json={"id": 8, "name": "No status"})
    with pytest.raises(Conflict, match="job 4 is succeeded"):
        client.job(4)
    with pytest.raises(ValueError, match="lacks created_at, dialogues_per_hit, hit_count"):
        client.campaign(8)


PROGRESS = {
    "hits": 2, "tiebreak_hits": 0, "assignments_needed": 6, "assignments_submitted": 3, "assignments_pending": 0,
    "assignments_in_progress": 1, "assignments_rejected": 0, "completion": 0.5,
}  # fmt: skip


@responses.activate
def test_progress_waits_while_the_first_figures_are_computed(client):
    url = f"{BASE}/api/campaigns/7/report/"
    responses.get(url, status=202, json={"detail": "being computed"}, headers={"Retry-After": "5"})
    responses.get(url, json={"progress": PROGRESS}, headers={"X-Figures-As-Of": "2026-01-01T00:00:00Z"})
    progress = client.progress(7, wait=30)
    assert (progress.completion, progress.as_of, progress.current) == (0.5, "2026-01-01T00:00:00Z", True)


@responses.activate
def test_progress_that_outlasts_the_wait_is_not_ready(client):
    from dialogue_curation_client import NotReady

    responses.get(f"{BASE}/api/campaigns/7/report/", status=202, json={"detail": "being computed"})
    with pytest.raises(NotReady, match="being computed"):
        client.progress(7, wait=0)


@responses.activate
def test_waiting_for_a_failed_job_raises_with_its_error(client):
    from dialogue_curation_client import JobFailed

    job = {"id": 5, "kind": "labeling.platform_publish", "percent": 0, "message": "", "result": None,
           "created_at": "2026-01-01T00:00:00Z", "finished_at": None}  # fmt: skip
    responses.get(f"{BASE}/api/jobs/5/", json={**job, "status": "running", "error": ""})
    responses.get(f"{BASE}/api/jobs/5/", json={**job, "status": "failed", "error": "campaign 3 is closed"})
    with pytest.raises(JobFailed, match="campaign 3 is closed"):
        client.wait_for_job(5, interval=0)


@responses.activate
def test_signing_in_follows_the_sites_redirect_to_https_and_posts_the_form_there():
    responses.get(
        "http://labels.example/accounts/login/",
        status=301,
        headers={"Location": "https://labels.example/accounts/login/"},
    )
    responses.get(
        "https://labels.example/accounts/login/", body="<form>", headers={"Set-Cookie": "csrftoken=abc; Path=/"}
    )
    signed_in = responses.post("https://labels.example/accounts/login/", status=302, headers={"Location": "/"})
    client = Client.sign_in("http://labels.example", "researcher", "pw")
    assert client.base_url == "https://labels.example/"
    sent = signed_in.calls[0].request
    assert (
        "csrfmiddlewaretoken=abc" in sent.body and sent.headers["Referer"] == "https://labels.example/accounts/login/"
    )


@responses.activate
def test_a_refused_sign_in_says_what_the_page_said():
    from dialogue_curation_client import SignInRefused

    page = '<ul class="errorlist nonfield"><li>Please enter a correct username and password.</li></ul>'
    responses.get(f"{BASE}/accounts/login/", body="<form>", headers={"Set-Cookie": "csrftoken=abc; Path=/"})
    responses.post(f"{BASE}/accounts/login/", status=200, body=page)
    with pytest.raises(SignInRefused, match="HTTP 200.*Please enter a correct username and password"):
        Client.sign_in(BASE, "researcher", "wrong")
