"""A stateful stand-in for Prolific's REST API (https://docs.prolific.com/api-reference), answering
the requests our adapter sends through a `requests`-like session (`session()`), and simulated
participants (`reserve`, `complete`, `return_submission`, `time_out`). Pure: no Django import.

Each rule names the page it follows:
- STUDY_STATES, their meaning: https://docs.prolific.com/api-reference/studies/the-study-object
- transitions (PUBLISH from UNPUBLISHED; PAUSE from ACTIVE; START from PAUSED; STOP from ACTIVE or
  PAUSED, final, leaving AWAITING REVIEW or COMPLETED):
  https://docs.prolific.com/api-reference/studies/transition-study and
  https://researcher-help.prolific.com/hc/en-gb/articles/360010963354-Pausing-stopping-a-study
- automatic pause: a full study whose submissions await review pauses itself when one of them is
  rejected or returned (same help page, "Automatic pausing")
- maximum_allowed_time at least 2 + 2*estimated + 2*sqrt(estimated) minutes (create a study,
  https://docs.prolific.com/api-reference/studies/create-study; the help centre's older form
  2 + X + 2*sqrt(X), https://researcher-help.prolific.co/hc/en-gb/articles/360009094694, is lower)
- places may only grow after publishing, and a grown AWAITING REVIEW / COMPLETED study recruits again,
  a stopped one too ("A completed study will become active again and resume recruiting",
  https://docs.prolific.com/api-reference/studies/update-study; https://researcher-help.prolific.com/en/article/a9dd41;
  https://mephisto.ai/docs/guides/how_to_use/providers/prolific/prolific_api_oddities)
- a project's studies are listed as StudyShort rows (id, name, internal_name, status, study_type;
  no external_study_url): https://docs.prolific.com/api-reference/studies/get-project-studies
- submissions: RESERVED when a participant takes a place ("By default, we reserve the study place
  for 10 minutes"), ACTIVE once started, TIMED-OUT past the maximum time (the place opens to a new
  participant), AWAITING REVIEW once completed: https://docs.prolific.com/api-reference/submissions/submission-object;
  a timed-out participant "can still complete their submission ... if they are still active on the
  study and are not replaced": https://researcher-help.prolific.co/hc/en-gb/articles/360009094694.
  What a reservation never started becomes is not documented: here it is dropped (its place free).
- a submission awaiting review is approved by Prolific after 21 days ("Submissions that are awaiting
  review are automatically approved after 21 days"): https://docs.prolific.com/api-reference/submissions/submissions-guide
- a partial approval's share is a field of the transition's request, never of the submission
  object (transition-submission; submission-object): the listing reports the status only
- submission statuses and transitions (APPROVE / REJECT only from AWAITING REVIEW, a rejection
  message of 100+ characters and a category; the same transition again is ignored):
  https://docs.prolific.com/api-reference/submissions/transition-submission
- a draft study can be deleted: https://docs.prolific.com/api-reference/studies/delete-study; a
  project's studies are listed: https://docs.prolific.com/api-reference/studies/get-studies-in-project
- a participant takes a study once; a participant group allowlist admits only its members:
  https://docs.prolific.com/api-reference/filters, https://docs.prolific.com/api-reference/participant-groups
- bonuses: set up (an unpaid object), then pay (202 Accepted; paying an object twice pays twice):
  https://docs.prolific.com/api-reference/bonuses; at most MAX_BONUS_ROWS ids per set-up (Prolific
  recommends splitting larger lists; this stand-in refuses them so that the split is tested)
"""

import itertools
import json as jsonlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from labeling.platforms.standin.faults import LOST, SERVER, THROTTLED, TIMEOUT, FaultPlan

API = "https://api.prolific.com/api/v1"
UNPUBLISHED, PUBLISHING, ACTIVE, PAUSED = "UNPUBLISHED", "PUBLISHING", "ACTIVE", "PAUSED"
AWAITING_REVIEW, COMPLETED = "AWAITING REVIEW", "COMPLETED"
STUDY_STATES = (UNPUBLISHED, PUBLISHING, ACTIVE, PAUSED, AWAITING_REVIEW, COMPLETED)
# submissions
S_ACTIVE, S_AWAITING, S_APPROVED, S_PARTIAL = "ACTIVE", "AWAITING REVIEW", "APPROVED", "PARTIALLY APPROVED"
S_REJECTED, S_RETURNED, S_TIMED_OUT = "REJECTED", "RETURNED", "TIMED-OUT"
S_RESERVED = "RESERVED"
HOLDING_A_PLACE = (S_RESERVED, S_ACTIVE, S_AWAITING, S_APPROVED, S_PARTIAL)
RESERVATION = timedelta(minutes=10)
AUTO_APPROVAL = timedelta(days=21)
TRANSITIONS = {"PUBLISH": (UNPUBLISHED,), "PAUSE": (ACTIVE,), "START": (PAUSED,), "STOP": (ACTIVE, PAUSED)}
MIN_REJECTION_MESSAGE = 100
MAX_BONUS_ROWS = 200
PAGE_SIZE = 50
RETRY_AFTER_SECONDS = "2"


def minimum_allowed_minutes(estimated: int) -> int:
    """The least maximum_allowed_time Prolific accepts for an estimate (rounded up)."""
    return math.ceil(2 + 2 * estimated + 2 * math.sqrt(estimated))


class Refused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


@dataclass
class Study:
    id: str
    body: dict
    status: str = UNPUBLISHED
    stopped: bool = False
    researcher_paused: bool = False  # paused by a PAUSE action (not by Prolific itself)

    @property
    def places(self) -> int:
        return int(self.body["total_available_places"])


@dataclass
class Submission:
    id: str
    study_id: str
    participant_id: str
    status: str = S_RESERVED
    study_code: str = ""
    paid: Decimal = Decimal(0)  # reward paid, in minor units
    return_requested: bool = False
    reserved_at: datetime | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    timed_out_at: datetime | None = None


@dataclass
class ProlificStandIn:
    workspace_currency: str = "GBP"
    faults: FaultPlan = field(default_factory=FaultPlan)
    studies: dict[str, Study] = field(default_factory=dict)
    submissions: dict[str, Submission] = field(default_factory=dict)
    groups: dict[str, set[str]] = field(default_factory=dict)
    bonuses: dict[str, dict] = field(default_factory=dict)  # id -> {"study_id", "rows", "paid": times}
    payments: list[tuple[str, str, Decimal]] = field(default_factory=list)  # (study, participant, amount) paid
    requests: list[tuple[str, str, dict | None]] = field(default_factory=list)  # (method, path, body)
    now: datetime = field(default_factory=lambda: datetime(2026, 11, 2, 9, 0, tzinfo=UTC))

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):022d}"[:24]

    def session(self) -> "StandInSession":
        return StandInSession(self)

    # --- the HTTP surface ------------------------------------------------------------------------

    def handle(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        self.requests.append((method, path, body))
        path, _, query = path.partition("?")
        parts = [p for p in path.split("/") if p]
        handler = _route(method, parts)
        if handler is None:
            return 404, {"error": f"no such endpoint {method} {path}"}
        try:
            return handler(self, parts, {**(body or {}), "?": query})
        except Refused as refused:
            return refused.status, {"error": {"detail": refused.detail}}

    def _study(self, study_id: str) -> Study:
        study = self.studies.get(study_id)
        if study is None:
            raise Refused(404, f"study {study_id} not found")
        if study.status == PUBLISHING:  # publishing is processed between two requests
            study.status = ACTIVE
            self._settle_study(study)
        return study

    def get_project(self, parts, body):
        return 200, {"id": parts[1], "workspace": "ws" + parts[1][2:]}

    def get_balance(self, parts, body):
        return 200, {"currency_code": self.workspace_currency, "total_balance": 10**9, "available_balance": 10**9}

    def create_study(self, parts, body):
        for name in ("name", "external_study_url", "completion_codes", "total_available_places", "reward"):
            if not body.get(name):
                raise Refused(400, f"{name}: this field is required")
        estimated, allowed = int(body["estimated_completion_time"]), int(body.get("maximum_allowed_time") or 0)
        if allowed and allowed < minimum_allowed_minutes(estimated):
            raise Refused(400, f"maximum_allowed_time must be at least {minimum_allowed_minutes(estimated)}")
        for rule in body.get("filters") or []:
            missing = [g for g in rule.get("selected_values", []) if g not in self.groups]
            if rule.get("filter_id") == "participant_group_allowlist" and missing:
                raise Refused(400, f"participant group {missing[0]} does not exist")
        study = Study(self._new_id("st"), dict(body))
        self.studies[study.id] = study
        return 201, self._study_json(study)

    def list_project_studies(self, parts, body):
        rows = [self._study_short(s) for s in self.studies.values() if s.body.get("project") == parts[1]]
        return 200, {"results": rows, "_links": {"next": {"href": None}}}

    def get_study(self, parts, body):
        return 200, self._study_json(self._study(parts[1]))

    def delete_study(self, parts, body):
        study = self._study(parts[1])
        if study.status != UNPUBLISHED:
            raise Refused(400, "only a draft study can be deleted")
        del self.studies[study.id]
        return 204, {}

    def update_study(self, parts, body):
        study = self._study(parts[1])
        places = body.get("total_available_places")
        if places is not None:
            if study.status != UNPUBLISHED and int(places) < study.places:
                raise Refused(400, "places can only be increased once a study is published")
            study.body["total_available_places"] = int(places)
            if study.status in (AWAITING_REVIEW, COMPLETED) and self._taken(study) < study.places:
                study.status, study.stopped = ACTIVE, False  # more places: it recruits again, stopped or not
        return 200, self._study_json(study)

    def transition_study(self, parts, body):
        study, action = self._study(parts[1]), body.get("action", "")
        allowed = TRANSITIONS.get(action)
        if allowed is None or study.status not in allowed or (study.stopped and action != "STOP"):
            raise Refused(400, f"cannot {action} a study that is {study.status}")
        if action == "PUBLISH":
            study.status = PUBLISHING
        elif action == "PAUSE":
            study.status, study.researcher_paused = PAUSED, True
        elif action == "START":
            study.status, study.researcher_paused = ACTIVE, False
            self._settle_study(study)
        else:  # STOP: final
            study.stopped = True
            study.status = AWAITING_REVIEW if self._awaiting(study) else COMPLETED
        return 200, self._study_json(study)

    def list_submissions(self, parts, body):
        study = self._study(parts[1])
        rows = [s for s in self.submissions.values() if s.study_id == study.id]
        page = int(body["?"].removeprefix("page=") or 0)
        chunk = rows[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        more = (page + 1) * PAGE_SIZE < len(rows)
        following = f"{API}/studies/{study.id}/submissions/?page={page + 1}" if more else None
        return 200, {"results": [self._submission_json(s) for s in chunk], "_links": {"next": {"href": following}}}

    def get_submission(self, parts, body):
        return 200, self._submission_json(self._submission(parts[1]))

    def transition_submission(self, parts, body):
        submission, action = self._submission(parts[1]), body.get("action", "")
        if (action, submission.status) in (("APPROVE", S_APPROVED), ("REJECT", S_REJECTED)):
            return 200, self._submission_json(submission)  # "the second request will be ignored"
        if submission.status != S_AWAITING:
            raise Refused(400, f"cannot {action} a submission that is {submission.status}")
        if action == "APPROVE":
            submission.status = S_APPROVED
            submission.paid = Decimal(self.studies[submission.study_id].body["reward"])
        elif action == "REJECT":
            if len(body.get("message") or "") < MIN_REJECTION_MESSAGE or not body.get("rejection_category"):
                raise Refused(400, "a rejection needs a message of 100+ characters and a rejection_category")
            self._free_place(submission, S_REJECTED)
        else:
            raise Refused(400, f"unknown action {action!r}")
        self._settle_study(self.studies[submission.study_id])
        return 200, self._submission_json(submission)

    def request_return(self, parts, body):
        submission = self._submission(parts[1])
        if submission.status != S_AWAITING:
            raise Refused(400, "a return can be requested only of a submission awaiting review")
        submission.return_requested = True
        return 200, self._submission_json(submission)

    def create_group(self, parts, body):
        group = self._new_id("pg")
        self.groups[group] = set()
        return 201, {"id": group, "name": body.get("name", "")}

    def add_to_group(self, parts, body):
        if parts[1] not in self.groups:
            raise Refused(404, f"participant group {parts[1]} not found")
        self.groups[parts[1]].update(body.get("participant_ids") or [])
        return 200, {"results": sorted(self.groups[parts[1]])}

    def set_up_bonuses(self, parts, body):
        study = self._study(body.get("study_id", ""))
        rows = [line.split(",") for line in (body.get("csv_bonuses") or "").splitlines() if line.strip()]
        if not rows or len(rows) > MAX_BONUS_ROWS:
            raise Refused(400, f"csv_bonuses must hold 1 to {MAX_BONUS_ROWS} rows")
        took_part = {s.participant_id for s in self.submissions.values() if s.study_id == study.id}
        for participant, _amount in rows:
            if participant not in took_part:
                raise Refused(400, f"participant {participant} did not take part in study {study.id}")
        bonus = self._new_id("bb")
        self.bonuses[bonus] = {"study_id": study.id, "rows": [(p, Decimal(a)) for p, a in rows], "paid": 0}
        return 201, {"id": bonus, "study": study.id, "total_amount": str(sum(Decimal(a) for _, a in rows))}

    def pay_bonuses(self, parts, body):
        bonus = self.bonuses.get(parts[1])
        if bonus is None:
            raise Refused(404, f"bulk bonus {parts[1]} not found")
        bonus["paid"] += 1  # documented: paying twice pays twice
        self.payments += [(bonus["study_id"], participant, amount) for participant, amount in bonus["rows"]]
        return 202, {}

    # --- simulated participants and researcher -----------------------------------------------------

    def reserve(self, study_id: str, participant_id: str) -> str | None:
        """A participant takes a place; the session id, or None when the study does not offer one."""
        study = self._study(study_id)
        if study.status != ACTIVE or self._taken(study) >= study.places:
            return None
        if any(s.study_id == study_id and s.participant_id == participant_id for s in self.submissions.values()):
            return None  # each participant takes a study once
        for rule in study.body.get("filters") or []:
            members = set().union(*(self.groups.get(g, set()) for g in rule.get("selected_values", [])))
            if rule.get("filter_id") == "participant_group_allowlist" and participant_id not in members:
                return None
        submission = Submission(self._new_id("se"), study_id, participant_id, reserved_at=self.now)
        self.submissions[submission.id] = submission
        return submission.id

    def start(self, session_id: str) -> None:
        """The participant opens the study's link: RESERVED -> ACTIVE."""
        submission = self.submissions[session_id]
        if submission.status == S_RESERVED:
            submission.status, submission.started_at = S_ACTIVE, self.now

    def complete(self, session_id: str, code: str) -> bool:
        """The participant completes: from ACTIVE, or from TIMED-OUT while their place was not
        taken by another participant (they were not replaced). True when it counted."""
        submission = self.submissions[session_id]
        study = self.studies[submission.study_id]
        replaced = submission.status == S_TIMED_OUT and self._taken(study) >= study.places
        if submission.status not in (S_ACTIVE, S_TIMED_OUT) or replaced:
            return False
        submission.status, submission.study_code, submission.completed_at = S_AWAITING, code, self.now
        self._settle_study(study)
        return True

    def return_submission(self, session_id: str) -> None:
        """The participant returns (while active, or after submitting: then the place frees)."""
        submission = self.submissions[session_id]
        if submission.status in (S_RESERVED, S_ACTIVE, S_AWAITING):
            self._free_place(submission, S_RETURNED)
            self._settle_study(self.studies[submission.study_id])

    def time_out(self, session_id: str) -> None:
        submission = self.submissions[session_id]
        if submission.status in (S_RESERVED, S_ACTIVE):
            submission.status, submission.timed_out_at = S_TIMED_OUT, self.now
            self._settle_study(self.studies[submission.study_id])

    def advance(self, delta: timedelta) -> None:
        """Time passes: reservations never started lapse after 10 minutes, active submissions past
        the study's maximum time time out (not final: see `complete`), and submissions awaiting
        review for 21 days are approved by Prolific."""
        self.now += delta
        for submission in list(self.submissions.values()):
            study = self.studies[submission.study_id]
            if submission.status == S_RESERVED and self.now - submission.reserved_at >= RESERVATION:
                del self.submissions[submission.id]
            elif submission.status == S_ACTIVE and submission.started_at is not None:
                limit = timedelta(minutes=int(study.body.get("maximum_allowed_time") or 0))
                if limit and self.now - submission.started_at > limit:
                    self.time_out(submission.id)
            elif submission.status == S_AWAITING and self.now - submission.completed_at >= AUTO_APPROVAL:
                submission.status, submission.paid = S_APPROVED, Decimal(study.body["reward"])
                self._settle_study(study)

    def partially_approve(self, session_id: str, share: Decimal) -> None:
        """The researcher approves part of the reward on Prolific's site."""
        submission = self.submissions[session_id]
        if submission.status == S_AWAITING:
            submission.status = S_PARTIAL
            submission.paid = Decimal(self.studies[submission.study_id].body["reward"]) * share

    def recruiting(self, study_id: str) -> bool:
        """Whether the study offers places to participants now."""
        study = self._study(study_id)
        return study.status == ACTIVE and self._taken(study) < study.places

    # --- rules shared by the actions ---------------------------------------------------------------

    def _free_place(self, submission: Submission, status: str) -> None:
        study = self.studies[submission.study_id]
        full_and_awaiting = self._taken(study) >= study.places and submission.status == S_AWAITING
        submission.status = status
        if full_and_awaiting and study.status in (ACTIVE, AWAITING_REVIEW) and not study.stopped:
            study.status = PAUSED  # Prolific's own pause: the researcher decides to refill or stop

    def _settle_study(self, study: Study) -> None:
        """A full study with no one still working awaits review, or is completed once reviewed."""
        if study.status not in (ACTIVE, AWAITING_REVIEW, COMPLETED) or self._taken(study) < study.places:
            return
        if any(s.status in (S_RESERVED, S_ACTIVE) for s in self._of(study)):
            return
        study.status = AWAITING_REVIEW if self._awaiting(study) else COMPLETED

    def _of(self, study: Study) -> list[Submission]:
        return [s for s in self.submissions.values() if s.study_id == study.id]

    def _taken(self, study: Study) -> int:
        return sum(s.status in HOLDING_A_PLACE for s in self._of(study))

    def _awaiting(self, study: Study) -> bool:
        return any(s.status == S_AWAITING for s in self._of(study))

    def _submission(self, session_id: str) -> Submission:
        if session_id not in self.submissions:
            raise Refused(404, f"submission {session_id} not found")
        return self.submissions[session_id]

    def _study_json(self, study: Study) -> dict:
        return {
            **study.body,
            "id": study.id,
            "status": study.status,
            "places_taken": self._taken(study),
            "total_available_places": study.places,
        }

    @staticmethod
    def _study_short(study: Study) -> dict:
        """A row of a project's study listing: StudyShort, not the full study object."""
        return {
            "id": study.id,
            "name": study.body.get("name", ""),
            "internal_name": study.body.get("internal_name"),
            "status": study.status,
            "study_type": "SINGLE",
        }

    @staticmethod
    def _submission_json(submission: Submission) -> dict:
        return {
            "id": submission.id,
            "participant_id": submission.participant_id,
            "study_id": submission.study_id,
            "status": submission.status,
            "study_code": submission.study_code or None,
            "started_at": submission.started_at.isoformat() if submission.started_at else None,
            "completed_at": submission.completed_at.isoformat() if submission.completed_at else None,
        }


ROUTES = {
    ("GET", "projects", "{}"): ProlificStandIn.get_project,
    ("GET", "workspaces", "{}", "balance"): ProlificStandIn.get_balance,
    ("POST", "studies"): ProlificStandIn.create_study,
    ("GET", "projects", "{}", "studies"): ProlificStandIn.list_project_studies,
    ("GET", "studies", "{}"): ProlificStandIn.get_study,
    ("PATCH", "studies", "{}"): ProlificStandIn.update_study,
    ("DELETE", "studies", "{}"): ProlificStandIn.delete_study,
    ("POST", "studies", "{}", "transition"): ProlificStandIn.transition_study,
    ("GET", "studies", "{}", "submissions"): ProlificStandIn.list_submissions,
    ("GET", "submissions", "{}"): ProlificStandIn.get_submission,
    ("POST", "submissions", "{}", "transition"): ProlificStandIn.transition_submission,
    ("POST", "submissions", "{}", "request-return"): ProlificStandIn.request_return,
    ("POST", "participant-groups"): ProlificStandIn.create_group,
    ("POST", "participant-groups", "{}", "participants"): ProlificStandIn.add_to_group,
    ("POST", "submissions", "bonus-payments"): ProlificStandIn.set_up_bonuses,
    ("POST", "bulk-bonus-payments", "{}", "pay"): ProlificStandIn.pay_bonuses,
}


def _route(method: str, parts: list[str]):
    """The handler of a path: a literal route first, else one with "{}" for the ids."""
    exact = ROUTES.get((method, *parts))
    if exact is not None:
        return exact
    for route, handler in ROUTES.items():
        same_shape = len(route) == len(parts) + 1 and route[0] == method
        if same_shape and all(want in ("{}", got) for want, got in zip(route[1:], parts, strict=True)):
            return handler
    return None


@dataclass
class StandInResponse:
    status_code: int
    payload: dict
    headers: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        return jsonlib.dumps(self.payload)

    @property
    def content(self) -> bytes:
        return self.text.encode() if self.payload else b""

    def json(self) -> dict:
        return self.payload


class StandInSession:
    """What the adapter's `make_session` returns: `request` answered by the stand-in, with faults."""

    def __init__(self, platform: ProlificStandIn) -> None:
        self.platform = platform
        self.headers: dict = {}

    def request(self, method: str, url: str, json=None, timeout=None) -> StandInResponse:
        from requests import exceptions

        if not url.startswith(API):
            raise exceptions.ConnectionError(f"the stand-in answers only {API}")
        path = url.removeprefix(API)
        fault = self.platform.faults.next_fault(f"{method} {path}")
        if fault == THROTTLED:
            return StandInResponse(429, {"error": "throttled"}, {"Retry-After": RETRY_AFTER_SECONDS})
        if fault == SERVER:
            return StandInResponse(500, {"error": "internal error"})
        if fault == TIMEOUT:
            raise exceptions.ReadTimeout("stand-in: timed out before the platform acted")
        status, payload = self.platform.handle(method, path, jsonlib.loads(jsonlib.dumps(json)) if json else None)
        if fault == LOST:
            raise exceptions.ReadTimeout("stand-in: the platform acted, the answer was lost")
        return StandInResponse(status, payload)
