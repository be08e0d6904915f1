"""Prolific's webhooks in the stand-in (`HookedProlificStandIn`): the workspace's secret, subscriptions
and their confirmation, and a signed delivery queued for every subscriber whenever a submission or a
study changes state; `deliver` sends what is queued through a sender the harness gives (the Django
test client posting to our receiving page), with faults: events lost, repeated, delivered out of
order. Pure: no Django import.

Each rule names the page it follows (https://docs.prolific.com/api-reference/webhooks/...):
- event types (get-event-types; receiving): submission.status.change {"resource_id", "event_type",
  "participant_id", "status"}, study.status.change {"resource_id", "event_type", "metadata", "status"}
- one secret per workspace; GET /hooks/secrets/?workspace_id= (required) lists it with its value;
  POST /hooks/secrets/ makes one and deletes the old (get-secrets; create-secret;
  documentation/core-concepts/monitoring-study-progress)
- a subscription needs the workspace's secret first and an https target ("target_url must use
  https://"); POST /hooks/subscriptions/ answers 201 {"results": [...]} with an X-Hook-Secret header;
  POST /hooks/subscriptions/{id}/ {"secret"} confirms it; GET /hooks/subscriptions/ lists enabled
  ones by default (create-subscription; confirm-subscription; get-subscriptions). That a subscription
  is not enabled, and receives nothing, until confirmed is our reading of "Used to confirm your
  intention to subscribe": the documents do not say what an unconfirmed one receives.
- a delivery: headers X-Prolific-Request-Signature = base64(HMAC-SHA256(secret, timestamp + body)) and
  X-Prolific-Request-Timestamp, "a UNIX timestamp of when the request was sent" (verifying), so a retry,
  sent later, is signed again at its own time; X-Event-ID, the same across retries (idempotency-...);
  X-Timestamp, when the event was sent (handling-event-order-...)
- retries: a connection issue or a non-2xx answer is retried, "up to 11 additional times"
  (event-delivery-and-retry-logic); delivery is "at least once", so an event may arrive twice
- not documented, chosen here: an event for every new status (a reservation's first, RESERVED,
  included; a lapsed reservation, which disappears, sends none); the secret that signs is the
  workspace's current one when the request is sent
"""

import base64
import hashlib
import hmac
import itertools
import json as jsonlib
import random
from dataclasses import dataclass, field, replace

from labeling.platforms.standin.prolific import ProlificStandIn, Refused, StandInResponse, StandInSession

SUBMISSION_EVENT, STUDY_EVENT = "submission.status.change", "study.status.change"
EVENT_TYPES = (STUDY_EVENT, SUBMISSION_EVENT, "study.progress.change", "study.has_high_return_rate")
ATTEMPTS = 12  # the first and "up to 11 additional times"
_ID_BLOCKS = itertools.count(1)
FIRST_RETRY_SECONDS = 60  # "Retry 1: 1 minute", "Retry 2: 2 minutes", "Doubles with each attempt"


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode(), str(timestamp).encode() + body, hashlib.sha256).digest()).decode()


@dataclass
class EventFaults:
    """What happens to events on the way (seeded): `lost`, the share never delivered (every attempt
    failed on the way); `repeated`, the share delivered a second time (at least once: the same
    X-Event-ID again, a new request); `reordered`, each batch sent in a shuffled order."""

    lost: float = 0.0
    repeated: float = 0.0
    reordered: bool = False
    seed: int = 0


@dataclass
class Delivery:
    event_id: str
    url: str
    workspace: str
    body: bytes
    sent_at: int  # X-Timestamp: when the event was first sent
    due: int = 0  # UNIX seconds: not sent before
    attempts: int = 0
    repeat: bool = False  # sent once more after it was first sent (delivery "at least once")


@dataclass
class HookedProlificStandIn(ProlificStandIn):
    event_faults: EventFaults = field(default_factory=EventFaults)
    hook_secrets: dict[str, dict] = field(default_factory=dict)  # workspace -> {"id", "value", "workspace_id"}
    subscriptions: dict[str, dict] = field(default_factory=dict)  # id -> the subscription, with "confirm"
    outbox: list[Delivery] = field(default_factory=list)
    lost_events: list[str] = field(default_factory=list)
    sent: list[tuple[str, int]] = field(default_factory=list)  # (event id, our answer's status) per request

    def __post_init__(self) -> None:
        super().__post_init__()
        # Prolific's ids are unique everywhere: a block of its own per stand-in, so two stand-ins in
        # one test (a run with events beside one without) never share a study or submission id
        self._ids = itertools.count(next(_ID_BLOCKS) * 10**12)
        self._random = random.Random(self.event_faults.seed)
        self._event_ids = itertools.count(1)
        self._headers: dict = {}

    def session(self) -> "HookedSession":
        return HookedSession(self)

    # --- the HTTP surface: /hooks/ here, the rest as before (watched for state changes) -------------

    def handle(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        self._headers = {}
        if path.startswith("/hooks/"):
            self.requests.append((method, path, body))
            try:
                return self._hooks(method, path, body or {})
            except Refused as refused:
                return refused.status, {"error": {"detail": refused.detail}}
        return self._watching(super().handle, method, path, body)

    def _hooks(self, method: str, path: str, body: dict) -> tuple[int, dict]:
        path, _, query = path.partition("?")
        parts, params = [p for p in path.split("/") if p], dict(q.split("=", 1) for q in query.split("&") if "=" in q)
        if parts == ["hooks", "secrets"] and method == "GET":
            if not params.get("workspace_id"):
                raise Refused(400, "workspace_id: this query parameter is required")
            listed = [self.hook_secrets[params["workspace_id"]]] if params["workspace_id"] in self.hook_secrets else []
            return 200, {"results": [dict(secret) for secret in listed]}
        if parts == ["hooks", "secrets"] and method == "POST":
            workspace = body.get("workspace_id", "")
            self.hook_secrets[workspace] = {
                "id": self._new_id("hs"),
                "value": self._new_id("v") + "Secret",
                "workspace_id": workspace,
            }
            return 201, dict(self.hook_secrets[workspace])
        if parts == ["hooks", "subscriptions"] and method == "GET":
            enabled = params.get("is_enabled", "true") != "false"
            rows = [self._public(s) for s in self.subscriptions.values() if s["is_enabled"] == enabled]
            rows = [s for s in rows if params.get("workspace_id") in (None, s["workspace_id"])]
            return 200, {"results": rows}
        if parts == ["hooks", "subscriptions"] and method == "POST":
            return self._create_subscription(body)
        if len(parts) == 3 and parts[:2] == ["hooks", "subscriptions"] and method == "POST":
            return self._confirm(parts[2], body)
        return 404, {"error": f"no such endpoint {method} {path}"}

    def _create_subscription(self, body: dict) -> tuple[int, dict]:
        for name in ("event_type", "target_url", "workspace_id"):
            if not body.get(name):
                raise Refused(400, f"{name}: this field is required")
        if body["event_type"] not in EVENT_TYPES:
            raise Refused(400, f"event_type: {body['event_type']} is not a subscribable event type")
        if not body["target_url"].startswith("https://"):
            raise Refused(400, "target_url must use https://")
        if body["workspace_id"] not in self.hook_secrets:
            raise Refused(400, "create a secret for the workspace before subscribing")
        subscription = {
            "id": self._new_id("sb"), "event_type": body["event_type"], "target_url": body["target_url"],
            "workspace_id": body["workspace_id"], "is_enabled": False, "confirm": self._new_id("hk"),
        }  # fmt: skip
        self.subscriptions[subscription["id"]] = subscription
        self._headers = {"X-Hook-Secret": subscription["confirm"]}
        return 201, {"results": [self._public(subscription)]}

    def _confirm(self, subscription_id: str, body: dict) -> tuple[int, dict]:
        subscription = self.subscriptions.get(subscription_id)
        if subscription is None:
            raise Refused(404, f"subscription {subscription_id} not found")
        if body.get("secret") != subscription["confirm"]:
            raise Refused(400, "secret: does not match the X-Hook-Secret of this subscription")
        subscription["is_enabled"] = True
        return 200, self._public(subscription)

    @staticmethod
    def _public(subscription: dict) -> dict:
        return {k: v for k, v in subscription.items() if k != "confirm"}

    # --- participants' and Prolific's own actions, watched for state changes -------------------------

    def reserve(self, study_id: str, participant_id: str) -> str | None:
        return self._watching(super().reserve, study_id, participant_id)

    def start(self, session_id: str) -> None:
        self._watching(super().start, session_id)

    def complete(self, session_id: str, code: str) -> bool:
        return self._watching(super().complete, session_id, code)

    def return_submission(self, session_id: str) -> None:
        self._watching(super().return_submission, session_id)

    def time_out(self, session_id: str) -> None:
        self._watching(super().time_out, session_id)

    def advance(self, delta) -> None:
        self._watching(super().advance, delta)

    def partially_approve(self, session_id: str, share) -> None:
        self._watching(super().partially_approve, session_id, share)

    def recruiting(self, study_id: str) -> bool:
        return self._watching(super().recruiting, study_id)

    def _watching(self, action, *args):
        before = self._states()
        answer = action(*args)
        after = self._states()
        for key, status in after.items():
            if before.get(key) != status:
                self._announce(*key, status)
        return answer

    def _states(self) -> dict[tuple[str, str], str]:
        states = {(STUDY_EVENT, study.id): study.status for study in self.studies.values()}
        states.update({(SUBMISSION_EVENT, s.id): s.status for s in self.submissions.values()})
        return states

    def _announce(self, kind: str, resource: str, status: str) -> None:
        if kind == STUDY_EVENT:
            study, extra = self.studies[resource], {"metadata": {}}
        else:
            submission = self.submissions[resource]
            study, extra = self.studies[submission.study_id], {"participant_id": submission.participant_id}
        workspace = "ws" + str(study.body.get("project", ""))[2:]  # get_project's workspace
        body = jsonlib.dumps({"resource_id": resource, "event_type": kind, **extra, "status": status}).encode()
        sent_at = int(self.now.timestamp())
        for subscription in self.subscriptions.values():
            if subscription["is_enabled"] and (subscription["event_type"], subscription["workspace_id"]) == (
                kind,
                workspace,
            ):
                event = f"ev{next(self._event_ids):022d}"
                if self._random.random() < self.event_faults.lost:
                    self.lost_events.append(event)
                    continue
                repeat = self._random.random() < self.event_faults.repeated
                self.outbox.append(
                    Delivery(event, subscription["target_url"], workspace, body, sent_at, sent_at, repeat=repeat)
                )

    # --- delivering ---------------------------------------------------------------------------------

    def deliver(self, send, now: int) -> int:
        """Send every queued delivery due by `now` (UNIX seconds) once, signed at `now` (when the request
        is sent); `send(url, body, headers)` answers the receiver's HTTP status. A non-2xx answer is
        tried again after FIRST_RETRY_SECONDS, doubling (jitter left out), up to ATTEMPTS in all.
        Returns how many were acknowledged (2xx)."""
        batch = [delivery for delivery in self.outbox if delivery.due <= now]
        self.outbox = [delivery for delivery in self.outbox if delivery.due > now]
        if self.event_faults.reordered:
            self._random.shuffle(batch)
        acknowledged = 0
        for delivery in batch:
            delivery.attempts += 1
            status = send(delivery.url, delivery.body, self.headers_for(delivery, now))
            self.sent.append((delivery.event_id, status))
            if delivery.repeat:  # its copy follows as a retry would, a minute later
                delivery.repeat = False
                self.outbox.append(replace(delivery, due=now + FIRST_RETRY_SECONDS, attempts=0))
            if 200 <= status < 300:
                acknowledged += 1
            elif delivery.attempts < ATTEMPTS:
                delivery.due = now + FIRST_RETRY_SECONDS * 2 ** (delivery.attempts - 1)
                self.outbox.append(delivery)
        return acknowledged

    def headers_for(self, delivery: Delivery, now: int) -> dict[str, str]:
        secret = self.hook_secrets.get(delivery.workspace, {}).get("value", "")
        return {
            "Content-Type": "application/json",
            "X-Prolific-Request-Signature": sign(secret, now, delivery.body),
            "X-Prolific-Request-Timestamp": str(now),
            "X-Event-ID": delivery.event_id,
            "X-Timestamp": str(delivery.sent_at),
        }


class HookedSession(StandInSession):
    """The stand-in's session, with the answer's headers (a subscription's X-Hook-Secret)."""

    def request(self, method: str, url: str, json=None, timeout=None) -> StandInResponse:
        self.platform._headers = {}  # a fault answers before the stand-in is reached: no headers then
        response = super().request(method, url, json=json, timeout=timeout)
        response.headers = {**response.headers, **self.platform._headers}
        return response
