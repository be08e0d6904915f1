"""The client: one requests session signed in through the site's own sign-in page (the API takes
the session, as the pages do: the same lockout after failed attempts, the same session lifetime,
one password check per sign-in rather than one per request). Unsafe requests carry the CSRF token
the server set. GETs are retried on a 5xx or a lost connection (they change nothing); nothing else is.
"""

import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin

import requests

from dialogue_curation_client.errors import JobFailed, NotReady, SignInRefused, error_for
from dialogue_curation_client.models import Campaign, Job, Progress, StudyReport

SIGN_IN = "/accounts/login/"
# (method, path) of every endpoint the client calls, as the OpenAPI schema names them
# (tests/client/test_schema_drift.py checks each is served)
ENDPOINTS = {
    "campaigns": ("get", "/api/campaigns/"),
    "create_campaign": ("post", "/api/campaigns/"),
    "campaign": ("get", "/api/campaigns/{id}/"),
    "set_status": ("post", "/api/campaigns/{id}/status/"),
    "publish": ("post", "/api/campaigns/{id}/publish/"),
    "progress": ("get", "/api/campaigns/{id}/report/"),
    "aggregate": ("post", "/api/campaigns/{id}/aggregate/"),
    "study_report": ("get", "/api/campaigns/{id}/study-report/"),
    "job": ("get", "/api/jobs/{id}/"),
    "export_labels": ("get", "/api/exports/stream/"),
}


class Client:
    def __init__(self, base_url: str, session: requests.Session, *, timeout: float = 30, retries: int = 3) -> None:
        self.base_url = base_url.rstrip("/") + "/"
        self.session = session
        self.timeout = timeout
        self.retries = retries

    @classmethod
    def sign_in(cls, base_url: str, username: str, password: str, **options: Any) -> "Client":
        """Sign in through the sign-in page; raises SignInRefused with the page's reason."""
        client = cls(base_url, requests.Session(), **options)
        page = client._send("get", SIGN_IN)
        reached = page.url.split("?")[0]
        if reached.endswith(SIGN_IN):  # redirected (http to https): talk to where the page was served
            client.base_url = reached[: -len(SIGN_IN)] + "/"
        form = {"username": username, "password": password, "csrfmiddlewaretoken": client._csrf_token()}
        answer = client.session.post(
            client._url(SIGN_IN),
            data=form,
            headers={"Referer": page.url},
            allow_redirects=False,
            timeout=client.timeout,
        )
        if answer.status_code != 302 or SIGN_IN in answer.headers.get("Location", SIGN_IN):
            raise SignInRefused(
                f"signing in as {username!r} was refused (HTTP {answer.status_code}): {_reason(answer)}"
            )
        return client

    # --- campaigns ---------------------------------------------------------------------------

    def campaigns(self) -> Iterator[Campaign]:
        """Every campaign, newest first (page after page)."""
        url: str | None = ENDPOINTS["campaigns"][1]
        while url:
            page = self._json("get", url)
            yield from (Campaign.from_json(row) for row in page["results"])
            url = page["next"]

    def campaign(self, campaign_id: int) -> Campaign:
        return Campaign.from_json(self._json(*_endpoint("campaign", id=campaign_id)))

    def create_campaign(self, name: str, **settings: Any) -> Campaign:
        """Create a campaign and its HITs: `dialogue_ids=[...]` or `recent_dialogues=N`, plus any
        field of the API's Campaign (labels, workers_per_hit, reward, ...). A bad one: BadRequest."""
        return Campaign.from_json(self._json(*_endpoint("create_campaign"), json={"name": name, **settings}))

    def set_status(self, campaign_id: int, status: str) -> Campaign:
        """open, paused or closed (draft -> open <-> paused -> closed)."""
        return Campaign.from_json(self._json(*_endpoint("set_status", id=campaign_id), json={"status": status}))

    def publish(self, campaign_id: int, platform: str = "local") -> Job:
        """Queue publishing on `platform` (local, mturk or prolific); wait with `wait_for_job`."""
        queued = self._json(*_endpoint("publish", id=campaign_id), json={"platform": platform})
        return self.job(queued["job"])

    def aggregate(self, campaign_id: int) -> Job:
        """Queue the aggregation of the answers into labels (what the gold export reads)."""
        return self.job(self._json(*_endpoint("aggregate", id=campaign_id))["job"])

    def progress(self, campaign_id: int, *, wait: float = 60) -> Progress:
        """The campaign's progress as last computed; waits up to `wait` s while the first figures are."""
        answer = self._until_computed(lambda: self._send(*_endpoint("progress", id=campaign_id)), wait)
        headers = answer.headers
        as_of, current = headers.get("X-Figures-As-Of", ""), headers.get("X-Figures-Current", "1") == "1"
        return Progress.from_json(answer.json()["progress"], as_of=as_of, current=current)

    def study_report(self, campaign_id: int) -> StudyReport:
        return StudyReport.from_json(self._json(*_endpoint("study_report", id=campaign_id)))

    def export_labels(self, kind: str = "gold", file_format: str = "csv", **filters: Any) -> str:
        """The dataset export, streamed: kind gold, extended or silver; csv or jsonl; filters label,
        min_confidence, source, split, model_version, layout (see the API page)."""
        params = {"kind": kind, "file_format": file_format, **filters}
        return self._send(*_endpoint("export_labels"), params=params).text

    # --- jobs --------------------------------------------------------------------------------

    def job(self, job_id: int) -> Job:
        return Job.from_json(self._json(*_endpoint("job", id=job_id)))

    def wait_for_job(self, job_id: int, *, timeout: float = 600, interval: float = 1.0) -> Job:
        """The job once finished; JobFailed if it failed or was cancelled, TimeoutError if still running."""
        deadline = time.monotonic() + timeout
        while not (job := self.job(job_id)).finished:
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} ({job.kind}) still {job.status} after {timeout:.0f} s")
            time.sleep(interval)
        if not job.succeeded:
            raise JobFailed(job)
        return job

    # --- HTTP --------------------------------------------------------------------------------

    def _json(self, method: str, path: str, **options: Any) -> Any:
        return self._send(method, path, **options).json()

    def _send(self, method: str, path: str, **options: Any) -> requests.Response:
        if method != "get":
            return self._check(self._request(method, path, **options))
        for attempt in range(self.retries + 1):
            try:
                answer = self._request(method, path, **options)
            except requests.ConnectionError:
                if attempt == self.retries:
                    raise
            else:
                if answer.status_code < 500 or attempt == self.retries:
                    return self._check(answer)
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")

    def _request(self, method: str, path: str, **options: Any) -> requests.Response:
        headers = {"Accept": "application/json"}
        if method != "get":
            headers |= {"X-CSRFToken": self._csrf_token(), "Referer": self.base_url}
        return self.session.request(method, self._url(path), headers=headers, timeout=self.timeout, **options)

    def _check(self, answer: requests.Response) -> requests.Response:
        if answer.status_code >= 400:
            raise error_for(answer.status_code, _body(answer), method=answer.request.method or "", url=answer.url)
        return answer

    def _until_computed(self, ask: Callable[[], requests.Response], wait: float) -> requests.Response:
        deadline = time.monotonic() + wait
        while (answer := ask()).status_code == 202:
            pause = float(answer.headers.get("Retry-After", "2"))
            if time.monotonic() + pause > deadline:
                raise NotReady(_body(answer).get("detail", "still being computed"))
            time.sleep(pause)
        return answer

    def _csrf_token(self) -> str:
        return self.session.cookies.get("csrftoken", default="") or ""

    def _url(self, path: str) -> str:
        return urljoin(self.base_url, path.lstrip("/")) if not path.startswith("http") else path


def _endpoint(name: str, **ids: int) -> tuple[str, str]:
    method, path = ENDPOINTS[name]
    return method, path.format(**ids)


def _body(answer: requests.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return answer.text


def _reason(answer: requests.Response) -> str:
    """The sign-in page's error list, without its markup."""
    import re

    found = re.search(r'<ul class="errorlist[^"]*">(.*?)</ul>', answer.text, flags=re.S)
    text = found.group(1) if found else answer.text
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)).strip()[:300] or answer.reason
