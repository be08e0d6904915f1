"""A stateful stand-in for Amazon Mechanical Turk's requester API, answering the calls our adapter
makes on a boto3 `mturk` client (`client()`), and simulated workers (`accept`, `submit`,
`return_assignment`), on its own clock (`advance`). Pure: no Django import (botocore's exceptions
only, so that errors read as boto3's do).

Each rule names the page it follows (https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/):
- CreateHITType answers the existing id for the same values: ApiReference_CreateHITTypeOperation.html
- CreateHITWithHITType, LifetimeInSeconds, UniqueRequestToken honoured for 24 hours, after which
  the same token makes a new HIT: ApiReference_CreateHITWithHITTypeOperation.html and
  https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMechanicalTurkRequester/RequestTokens.html
- an expired HIT takes no worker and no longer appears in searches; UpdateExpirationForHIT with a
  past time expires it, a future time extends it: ApiReference_UpdateExpirationForHITOperation.html
- CreateAdditionalAssignmentsForHIT: a HIT made with fewer than 10 assignments cannot reach 10 or
  more; its UniqueRequestToken: ApiReference_CreateAdditionalAssignmentsForHITOperation.html
- assignments Submitted -> Approved / Rejected, and Approved after the HIT type's
  AutoApprovalDelayInSeconds: ApiReference_ApproveAssignmentOperation.html,
  ApiReference_RejectAssignmentOperation.html, ApiReference_AssignmentDataStructureArticle.html;
  an accepted assignment not submitted within AssignmentDurationInSeconds is abandoned (its seat
  offered again): ApiReference_HITDataStructureArticle.html
- qualification requirements (Exists / DoesNotExist, In for locale): ApiReference_QualificationRequirementDataStructureArticle.html;
  a qualification type's name is unique per requester: ApiReference_CreateQualificationTypeOperation.html
- ApproveAssignment pays the reward and MTurk's fee from the requester's balance, and is refused
  (nothing approved) when the balance cannot cover them: ApiReference_ApproveAssignmentOperation.html
  ("If the Requester's account does not have adequate funds for these payments, the call to
  ApproveAssignment returns an exception, and the approval is not processed"); an auto-approval
  pays the same way (a balance short of it leaves the assignment Submitted until it can)
- a rejected assignment's place is used for good: MaxAssignments is "the number of times the HIT
  can be accepted and completed" (ApiReference_HITDataStructureArticle.html); only an abandoned or
  returned assignment is offered again
- SendBonus needs a submitted assignment of that worker and funds; its UniqueRequestToken is
  honoured for 24 hours: ApiReference_SendBonusOperation.html
- fees: 20 % on rewards and bonuses, 20 % more on the rewards of HITs of 10+ assignments:
  https://www.mturk.com/pricing
"""

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from labeling.platforms.standin.faults import LOST, SERVER, THROTTLED, TIMEOUT, FaultPlan

TOKEN_LIFE = timedelta(hours=24)
TEN = 10
FEE, FEE_TEN_PLUS_EXTRA = Decimal("0.20"), Decimal("0.20")
LOCALE_QUALIFICATION = "00000000000000000071"
APPROVAL_RATE_QUALIFICATION = "000000000000000000L0"
SYSTEM_QUALIFICATIONS = {LOCALE_QUALIFICATION, APPROVAL_RATE_QUALIFICATION}


class RequestError(Exception):
    """MTurk's refusal (boto3 raises it as a ClientError with Code RequestError)."""


@dataclass
class Assignment:
    id: str
    hit_id: str
    worker_id: str
    accepted_at: datetime
    status: str = "Accepted"  # Accepted (not listed), Submitted, Approved, Rejected
    answer: str = ""
    submitted_at: datetime | None = None
    auto_approved: bool = False


@dataclass
class HIT:
    id: str
    hit_type: str
    max_assignments: int
    expires_at: datetime
    annotation: str
    created_max: int  # MaxAssignments at creation (the 10-assignment rule)


@dataclass
class MTurkStandIn:
    balance: Decimal = Decimal("100000.00")
    faults: FaultPlan = field(default_factory=FaultPlan)
    now: datetime = field(default_factory=lambda: datetime(2026, 11, 2, 9, 0, tzinfo=UTC))
    hit_types: dict[str, dict] = field(default_factory=dict)
    hits: dict[str, HIT] = field(default_factory=dict)
    assignments: dict[str, Assignment] = field(default_factory=dict)
    qualification_types: dict[str, str] = field(default_factory=dict)  # id -> name
    granted: dict[str, dict[str, int]] = field(default_factory=dict)  # qualification -> worker -> value
    bonuses: list[dict] = field(default_factory=list)
    tokens: dict[tuple[str, str], tuple[datetime, object]] = field(default_factory=dict)
    calls: list[tuple[str, dict]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):028d}"[:30]

    def client(self) -> "StandInClient":
        return StandInClient(self)

    def advance(self, delta: timedelta) -> None:
        """Time passes: abandoned assignments free their seat, submitted ones auto-approve."""
        self.now += delta
        for assignment in list(self.assignments.values()):
            hit_type = self.hit_types[self.hits[assignment.hit_id].hit_type]
            if assignment.status == "Accepted":
                if self.now - assignment.accepted_at > timedelta(seconds=hit_type["AssignmentDurationInSeconds"]):
                    del self.assignments[assignment.id]  # abandoned: the seat is offered again
            elif assignment.status == "Submitted":
                delay = timedelta(seconds=hit_type["AutoApprovalDelayInSeconds"])
                if self.now - assignment.submitted_at >= delay and self._cost(assignment) <= self.balance:
                    self.balance -= self._cost(assignment)
                    assignment.status, assignment.auto_approved = "Approved", True

    # --- requester operations (boto3 names, snake_case) ---------------------------------------------

    def create_hit_type(self, **params) -> dict:
        key = repr(sorted(params.items()))
        for type_id, known in self.hit_types.items():
            if known["_key"] == key:
                return {"HITTypeId": type_id}
        type_id = self._new_id("T")
        self.hit_types[type_id] = {**params, "_key": key}
        return {"HITTypeId": type_id}

    def create_hit_with_hit_type(self, **params) -> dict:
        def make():
            if params["HITTypeId"] not in self.hit_types:
                raise RequestError(f"HIT type {params['HITTypeId']} does not exist")
            reward = Decimal(self.hit_types[params["HITTypeId"]]["Reward"])
            if reward * params["MaxAssignments"] > self.balance:
                raise RequestError(
                    "This Requester has insufficient funds in their account to complete this transaction"
                )
            hit = HIT(
                self._new_id("H"),
                params["HITTypeId"],
                params["MaxAssignments"],
                self.now + timedelta(seconds=params["LifetimeInSeconds"]),
                params.get("RequesterAnnotation", ""),
                params["MaxAssignments"],
            )
            self.hits[hit.id] = hit
            return {"HIT": self._hit_json(hit)}

        return self._once("CreateHIT", params.get("UniqueRequestToken"), make)

    def list_hits(self, MaxResults=100, NextToken=None) -> dict:
        hits = list(self.hits.values())
        start = int(NextToken or 0)
        page = hits[start : start + MaxResults]
        following = str(start + MaxResults) if start + MaxResults < len(hits) else None
        return {"HITs": [self._hit_json(h) for h in page], **({"NextToken": following} if following else {})}

    def get_hit(self, HITId) -> dict:
        return {"HIT": self._hit_json(self._hit(HITId))}

    def update_expiration_for_hit(self, HITId, ExpireAt) -> dict:
        hit = self._hit(HITId)
        hit.expires_at = min(ExpireAt, self.now) if ExpireAt <= self.now else ExpireAt
        return {}

    def create_additional_assignments_for_hit(self, HITId, NumberOfAdditionalAssignments, UniqueRequestToken=None):
        def extend():
            hit = self._hit(HITId)
            if hit.created_max < TEN <= hit.max_assignments + NumberOfAdditionalAssignments:
                raise RequestError("HITs created with fewer than 10 assignments cannot be extended to 10 or more")
            hit.max_assignments += NumberOfAdditionalAssignments
            return {}

        return self._once("ExtendHIT", UniqueRequestToken, extend)

    def list_assignments_for_hit(self, HITId, AssignmentStatuses=None, MaxResults=100, NextToken=None) -> dict:
        statuses = AssignmentStatuses or ["Submitted", "Approved", "Rejected"]
        rows = [a for a in self.assignments.values() if a.hit_id == self._hit(HITId).id and a.status in statuses]
        start = int(NextToken or 0)
        page = rows[start : start + MaxResults]
        following = str(start + MaxResults) if start + MaxResults < len(rows) else None
        return {
            "Assignments": [self._assignment_json(a) for a in page],
            **({"NextToken": following} if following else {}),
        }

    def approve_assignment(self, AssignmentId, RequesterFeedback="", OverrideRejection=False) -> dict:
        assignment = self._assignment(AssignmentId)
        allowed = ("Submitted", "Rejected") if OverrideRejection else ("Submitted",)
        if assignment.status not in allowed:
            raise RequestError(f"This operation can be called with a status of: Submitted (it is {assignment.status})")
        if self._cost(assignment) > self.balance:
            raise RequestError("This Requester has insufficient funds in their account to complete this transaction")
        self.balance -= self._cost(assignment)
        assignment.status = "Approved"
        return {}

    def reject_assignment(self, AssignmentId, RequesterFeedback) -> dict:
        assignment = self._assignment(AssignmentId)
        if assignment.status != "Submitted":
            raise RequestError(f"This operation can be called with a status of: Submitted (it is {assignment.status})")
        assignment.status = "Rejected"
        return {}

    def send_bonus(self, WorkerId, BonusAmount, AssignmentId, Reason, UniqueRequestToken=None) -> dict:
        def pay():
            assignment = self.assignments.get(AssignmentId)
            if assignment is None or assignment.worker_id != WorkerId or assignment.status == "Accepted":
                raise RequestError(f"Assignment {AssignmentId} of worker {WorkerId} was not submitted")
            amount = Decimal(BonusAmount)
            if amount * (1 + FEE) > self.balance:
                raise RequestError(
                    "This Requester has insufficient funds in their account to complete this transaction"
                )
            self.balance -= amount * (1 + FEE)
            self.bonuses.append({"WorkerId": WorkerId, "AssignmentId": AssignmentId, "BonusAmount": BonusAmount})
            return {}

        return self._once("SendBonus", UniqueRequestToken, pay)

    def list_bonus_payments(self, AssignmentId=None, HITId=None, MaxResults=100, NextToken=None) -> dict:
        rows = [b for b in self.bonuses if AssignmentId in (None, b["AssignmentId"])]
        return {"BonusPayments": [dict(b, Reason="") for b in rows], "NumResults": len(rows)}

    def create_qualification_type(self, Name, **params) -> dict:
        if Name in self.qualification_types.values():
            raise RequestError(f"You have already created a QualificationType with this name: {Name}")
        type_id = self._new_id("Q")
        self.qualification_types[type_id] = Name
        return {"QualificationType": {"QualificationTypeId": type_id, "Name": Name}}

    def list_qualification_types(self, Query="", MustBeRequestable=False, MustBeOwnedByCaller=True, **params):
        found = [{"QualificationTypeId": i, "Name": n} for i, n in self.qualification_types.items() if Query in n]
        return {"QualificationTypes": found}

    def associate_qualification_with_worker(
        self, QualificationTypeId, WorkerId, IntegerValue=1, SendNotification=False
    ):
        if QualificationTypeId not in self.qualification_types:
            raise RequestError(f"QualificationType {QualificationTypeId} does not exist")
        self.granted.setdefault(QualificationTypeId, {})[WorkerId] = IntegerValue
        return {}

    # --- simulated workers -------------------------------------------------------------------------

    def searchable(self, hit_id: str) -> bool:
        hit = self.hits[hit_id]
        return hit.expires_at > self.now and self._open_seats(hit) > 0

    def accept(self, hit_id: str, worker_id: str) -> str | None:
        """A worker accepts the HIT: the assignment id, or None when MTurk would not offer it."""
        hit = self.hits[hit_id]
        if not self.searchable(hit_id) or not self._qualified(hit, worker_id):
            return None
        if any(a.hit_id == hit_id and a.worker_id == worker_id for a in self.assignments.values()):
            return None  # one assignment per worker per HIT
        assignment = Assignment(self._new_id("A"), hit_id, worker_id, self.now)
        self.assignments[assignment.id] = assignment
        return assignment.id

    def submit(self, assignment_id: str, answers: dict[str, str]) -> None:
        assignment = self.assignments.get(assignment_id)
        if assignment is not None and assignment.status == "Accepted":
            assignment.status, assignment.submitted_at = "Submitted", self.now
            assignment.answer = answer_xml(answers)

    def return_assignment(self, assignment_id: str) -> None:
        assignment = self.assignments.get(assignment_id)
        if assignment is not None and assignment.status == "Accepted":
            del self.assignments[assignment_id]

    def recruiting_hits(self) -> list[str]:
        return [h.id for h in self.hits.values() if self.searchable(h.id)]

    # --- rules shared by the operations ------------------------------------------------------------

    def _once(self, operation: str, token: str | None, act):
        """Run `act` once per token within TOKEN_LIFE; a repeat is refused as MTurk refuses it
        (its message names no id), and a token older than that is forgotten."""
        if token:
            seen = self.tokens.get((operation, token))
            if seen is not None and self.now - seen[0] < TOKEN_LIFE:
                raise RequestError(f"The value of UniqueRequestToken {token} has already been used")
        answer = act()
        if token:
            self.tokens[(operation, token)] = (self.now, answer)
        return answer

    def _cost(self, assignment: Assignment) -> Decimal:
        """The reward and MTurk's fee on it (20 %, and 20 % more for a HIT of 10+ assignments)."""
        hit = self.hits[assignment.hit_id]
        reward = Decimal(self.hit_types[hit.hit_type]["Reward"])
        return reward * (1 + FEE + (FEE_TEN_PLUS_EXTRA if hit.max_assignments >= TEN else 0))

    def _qualified(self, hit: HIT, worker_id: str) -> bool:
        for rule in self.hit_types[hit.hit_type].get("QualificationRequirements") or []:
            type_id = rule["QualificationTypeId"]
            if type_id in SYSTEM_QUALIFICATIONS:
                continue  # every simulated worker meets locale and approval rate
            has = worker_id in self.granted.get(type_id, {})
            if has != (rule["Comparator"] != "DoesNotExist"):
                return False
        return True

    def _open_seats(self, hit: HIT) -> int:
        return hit.max_assignments - sum(a.hit_id == hit.id for a in self.assignments.values())

    def _hit(self, hit_id: str) -> HIT:
        if hit_id not in self.hits:
            raise RequestError(f"Hit {hit_id} does not exist")
        return self.hits[hit_id]

    def _assignment(self, assignment_id: str) -> Assignment:
        if assignment_id not in self.assignments:
            raise RequestError(f"Assignment {assignment_id} does not exist")
        return self.assignments[assignment_id]

    def _hit_json(self, hit: HIT) -> dict:
        taken = [a for a in self.assignments.values() if a.hit_id == hit.id]
        status = "Assignable" if self.searchable(hit.id) else "Unassignable"
        return {
            "HITId": hit.id,
            "HITTypeId": hit.hit_type,
            "MaxAssignments": hit.max_assignments,
            "Expiration": hit.expires_at,
            "HITStatus": status,
            "RequesterAnnotation": hit.annotation,
            "NumberOfAssignmentsPending": sum(a.status == "Accepted" for a in taken),
            "NumberOfAssignmentsCompleted": sum(a.status in ("Approved", "Rejected") for a in taken),
            "NumberOfAssignmentsAvailable": max(0, self._open_seats(hit)),
        }

    @staticmethod
    def _assignment_json(assignment: Assignment) -> dict:
        return {
            "AssignmentId": assignment.id,
            "WorkerId": assignment.worker_id,
            "HITId": assignment.hit_id,
            "AssignmentStatus": assignment.status,
            "Answer": assignment.answer,
        }


def answer_xml(answers: dict[str, str]) -> str:
    from xml.sax.saxutils import escape

    ns = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd"
    rows = "".join(
        f"<Answer><QuestionIdentifier>{escape(k)}</QuestionIdentifier><FreeText>{escape(v)}</FreeText></Answer>"
        for k, v in answers.items()
    )
    return f'<QuestionFormAnswers xmlns="{ns}">{rows}</QuestionFormAnswers>'


class StandInClient:
    """What the adapter's `make_client` returns: each boto3 method answered by the stand-in, with
    faults, and refusals raised as botocore's ClientError."""

    def __init__(self, platform: MTurkStandIn) -> None:
        self.platform = platform

    def __getattr__(self, operation: str):
        method = getattr(MTurkStandIn, operation, None)
        if method is None or operation.startswith("_") or operation in STAND_IN_ONLY:
            raise AttributeError(f"the MTurk stand-in has no operation {operation}")

        def call(**params):
            return self._call(operation, params)

        return call

    def _call(self, operation: str, params: dict):
        from botocore import exceptions

        platform = self.platform
        platform.calls.append((operation, params))
        fault = platform.faults.next_fault(operation)
        if fault == THROTTLED:
            raise _client_error("ThrottlingException", "Rate exceeded", operation)
        if fault == SERVER:
            raise _client_error("ServiceFault", "internal error", operation)
        if fault == TIMEOUT:
            raise exceptions.ReadTimeoutError(endpoint_url="https://mturk-requester.stand-in")
        try:
            answer = getattr(platform, operation)(**params)
        except RequestError as refused:
            if fault == LOST:
                raise exceptions.ReadTimeoutError(endpoint_url="https://mturk-requester.stand-in") from None
            raise _client_error("RequestError", str(refused), operation) from None
        if fault == LOST:
            raise exceptions.ReadTimeoutError(endpoint_url="https://mturk-requester.stand-in")
        return answer


STAND_IN_ONLY = {"advance", "accept", "submit", "return_assignment", "searchable", "recruiting_hits", "client"}


def _client_error(code: str, message: str, operation: str):
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": code, "Message": message}}, operation)
