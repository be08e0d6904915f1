"""Amazon Mechanical Turk through boto3's `mturk` client.

A campaign becomes one HIT type (reward, durations, keywords, qualification requirements) and one
HIT per HIT of ours, an ExternalQuestion that opens our signed entry link in MTurk's frame.

The sandbox is the default (MTURK_SANDBOX); set MTURK_SANDBOX=0 to spend real money. Credentials
come only from boto3's chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment, or an
instance role); nothing here reads, stores or logs them. `make_client` is the one point tests
replace (with a client under botocore's Stubber); every call goes through calls.call.

Idempotency: HITs are created with a UniqueRequestToken per HIT of ours, bonuses with the ledger
entry's token and extra assignments with a token per (HIT, new seat count), so a retry after a
lost answer makes MTurk answer "already done" instead of doing it twice. MTurk honours a token for
24 hours only (https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMechanicalTurkRequester/RequestTokens.html;
ApiReference_SendBonusOperation.html, ApiReference_CreateHITOperation.html): past TOKEN_TRUSTED_FOR, nothing is resent before the platform is
asked what was done (ListBonusPayments for a bonus, ListHITs for HITs, GetHIT for assignments).
"""

import re
from datetime import timedelta
from decimal import Decimal
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from django.conf import settings

from labeling.models import HIT, Campaign, PaymentEntry, Publication
from labeling.platforms import base, calls, checks, qualification
from labeling.platforms.base import ExternalResult, PlatformError
from labeling.platforms.costs import CostPreview, cost_preview
from labeling.platforms.mturk_qualifications import MTurkQualifications, qualification_requirements

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
REGION = "us-east-1"
FRAME_HEIGHT = 800
WORKER_SITE = {True: "https://workersandbox.mturk.com", False: "https://worker.mturk.com"}
_ANSWER_NS = "{http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd}"
_STATUS = {"Submitted": base.SUBMITTED, "Approved": base.APPROVED, "Rejected": base.REJECTED}
# MTurk's answer to a UniqueRequestToken it has seen: the earlier request was done
_ALREADY_DONE = re.compile(r"UniqueRequestToken|already (been )?(processed|exists|used)", re.IGNORECASE)
TOKEN_LENGTH = 64
# MTurk honours a UniqueRequestToken for 24 hours; an hour's margin for clocks and slow calls
TOKEN_TRUSTED_FOR = timedelta(hours=23)
# a HIT created with fewer than 10 assignments cannot be extended to 10 or more
# (https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_CreateAdditionalAssignmentsForHITOperation.html)
TEN_ASSIGNMENTS = 10
# a place added to a HIT that expires sooner than this is offered for a fresh lifetime
# (MTURK_LIFETIME_HOURS from now) first, so a worker can still find and finish it:
# https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_UpdateExpirationForHITOperation.html
PLACE_RUNWAY_SHARE = 0.5  # of MTURK_LIFETIME_HOURS


def make_client(sandbox: bool = True):
    """The one transport point: boto3's mturk client, or the stand-in's (labeling.platforms.standin)
    when one is installed or PLATFORM_STANDIN is set."""
    import boto3
    from botocore.config import Config

    from labeling.platforms import standin

    if standin.installed("mturk") is not None:
        return standin.installed("mturk").client()
    if settings.PLATFORM_STANDIN:
        return standin.shared("mturk").client()

    # retries are ours (labeling.platforms.calls): one try per call here
    options = {"region_name": REGION, "config": Config(retries={"total_max_attempts": 1})}
    if sandbox:
        options["endpoint_url"] = SANDBOX_ENDPOINT
    return boto3.client("mturk", **options)


def external_question(url: str, frame_height: int = FRAME_HEIGHT) -> str:
    return (
        '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/'
        'AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">'
        f"<ExternalURL>{escape(url)}</ExternalURL><FrameHeight>{frame_height}</FrameHeight></ExternalQuestion>"
    )


def parse_answers(answer_xml: str) -> dict[str, str]:
    """The fields posted back to MTurk's externalSubmit, from its QuestionFormAnswers XML."""
    if not answer_xml:
        return {}
    try:
        root = ElementTree.fromstring(answer_xml)
    except ElementTree.ParseError as error:
        raise PlatformError(f"MTurk answer is not XML: {error}") from error
    answers = {}
    for node in root.iter(f"{_ANSWER_NS}Answer"):
        key = node.findtext(f"{_ANSWER_NS}QuestionIdentifier") or ""
        answers[key] = node.findtext(f"{_ANSWER_NS}FreeText") or ""
    return answers


def fee_rate(max_assignments: int) -> Decimal:
    """MTurk's commission: MTURK_FEE_RATE, or MTURK_FEE_RATE_10_PLUS for HITs of 10+ assignments."""
    rate = settings.MTURK_FEE_RATE_10_PLUS if max_assignments >= 10 else settings.MTURK_FEE_RATE
    return Decimal(str(rate))


def _priced(campaign: Campaign, paid: list[int], quiz: list[int]) -> list[tuple[Decimal, int]]:
    """(reward, assignments) of each HIT to be published."""
    return [(campaign.reward, w) for w in paid] + [(campaign.qualification_reward, w) for w in quiz]


def _unsettled_hit_ids(publication: Publication) -> list[str]:
    """Published HITs whose places are not all filled by approved work. A rejected assignment does
    not settle its place: MTurk never offers it again by itself (HIT.MaxAssignments is "the number
    of times the HIT can be accepted and completed",
    https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_HITDataStructureArticle.html),
    so sync asks for an assignment more (`replace_rejected`) and the HIT is listed until the
    replacement's work is approved."""
    from django.db.models import Count, F, Q

    from labeling.models import PlatformSubmission

    approved = Q(
        assignments__platform_submission__publication=publication,
        assignments__platform_submission__decision=PlatformSubmission.APPROVED,
    )
    hits = (
        publication.campaign.hits.exclude(external_id="")
        .annotate(settled=Count("assignments", filter=approved))
        .exclude(settled__gte=F("required_workers"))
        .order_by("position")
    )
    return list(hits.values_list("external_id", flat=True))


def _scope(publication: Publication) -> str:
    """Unique to this publication, even across databases that reuse primary keys."""
    return f"{publication.pk}.{publication.created_at:%Y%m%d%H%M%S}"


def _older_than_tokens(moment) -> bool:
    from django.utils import timezone

    return timezone.now() - moment > TOKEN_TRUSTED_FOR


def _token(*parts: object) -> str:
    return "-".join(str(part) for part in parts)[:TOKEN_LENGTH]


class MTurkPlatform(MTurkQualifications):
    name = "mturk"

    def __init__(self, client=None, *, sandbox: bool | None = None) -> None:
        self.sandbox = settings.MTURK_SANDBOX if sandbox is None else sandbox
        self._client = client
        # HIT id -> ids of its rejected assignments, as listed by this adapter's sync and rejected by it
        self._rejected: dict[str, set[str]] = {}

    @property
    def client(self):
        if self._client is None:
            self._client = make_client(self.sandbox)
        return self._client

    def _call(self, operation: str, *, repeatable: bool = True, **params):
        method = getattr(self.client, operation)
        return calls.call(self.name, operation, lambda: method(**params), repeatable=repeatable)

    # --- publishing ------------------------------------------------------------------------------

    def cost_preview(self, campaign: Campaign, base_url: str = "") -> CostPreview:
        """The cost of the unpublished HITs (the quiz's at its own reward), MTurk's fees as its
        pricing page reckons them (https://www.mturk.com/pricing: 20 % on rewards and bonuses, 20 %
        more on the rewards of HITs of 10 or more assignments, never on bonuses), the hourly rate
        against MTURK_MIN_HOURLY_RATE, and what refuses publishing."""
        unpublished = list(campaign.hits.filter(external_id="").values_list("kind", "required_workers"))
        paid = [workers for kind, workers in unpublished if kind != HIT.QUALIFICATION]
        quiz = [workers for kind, workers in unpublished if kind == HIT.QUALIFICATION]
        if not campaign.qualification_required:
            quiz = []
        reward_fees = sum(
            (reward * workers * fee_rate(workers) for reward, workers in _priced(campaign, paid, quiz)), Decimal(0)
        )
        preview = cost_preview(
            seats=sum(paid),
            reward=campaign.reward,
            bonus=campaign.bonus,
            bonus_share=Decimal(str(settings.PLATFORM_EXPECTED_BONUS_SHARE)),
            fee_rate=Decimal(str(settings.MTURK_FEE_RATE)),
            currency=campaign.currency,
            quiz_seats=sum(quiz),
            quiz_reward=campaign.qualification_reward,
            reward_fees=reward_fees,
            fee_note=(
                f"MTurk fees: {settings.MTURK_FEE_RATE * 100:.0f} % of rewards and bonuses, "
                f"{settings.MTURK_FEE_RATE_10_PLUS * 100:.0f} % of the rewards of HITs of 10+ assignments"
            ),
        )
        pay = checks.hourly_pay(campaign, settings.MTURK_MIN_HOURLY_RATE)
        refusals = (
            [] if campaign.currency == "USD" else [f"MTurk pays in US dollars; the campaign is in {campaign.currency}"]
        )
        refusals += pay.refusals("MTurk", "MTURK_MIN_HOURLY_RATE") + checks.https_refusal(base_url, "MTurk")
        refusals += qualification.pay_refusals(
            campaign, settings.MTURK_MIN_HOURLY_RATE, "MTurk", "MTURK_MIN_HOURLY_RATE"
        )
        return checks.with_checks(preview, pay, refusals)

    def publish(self, campaign: Campaign, base_url: str) -> int:
        from labeling.platforms.publications import hit_url, publication_for

        checks.refuse_unless_publishable(campaign, self.cost_preview(campaign, base_url))
        publication = publication_for(campaign, self.name, sandbox=self.sandbox)
        quiz = self._qualification(campaign) if campaign.qualification_required else None
        if not publication.external_id:
            answer = self._call("create_hit_type", **self._hit_type(campaign, quiz.external_id if quiz else ""))
            Publication.objects.filter(pk=publication.pk).update(external_id=answer["HITTypeId"])
            publication.external_id = answer["HITTypeId"]
        elif _older_than_tokens(publication.created_at):
            self._adopt_listed_hits(publication, quiz.quiz_external_id if quiz else "")
        published = 0
        for hit in campaign.hits.filter(external_id="").select_related("campaign").order_by("position"):
            hit_type = quiz.quiz_external_id if quiz and hit.kind == HIT.QUALIFICATION else publication.external_id
            hit_id = self._create_hit(publication, hit, hit_url(base_url, hit), hit_type)
            HIT.objects.filter(pk=hit.pk, external_id="").update(external_id=hit_id)
            published += 1
        return published

    def _hit_type(self, campaign: Campaign, quiz_qualification: str = "") -> dict:
        return {
            "Title": f"Label the emotion of short movie dialogues ({campaign.name})"[:128],
            "Description": "Read short dialogues from films and choose the emotion or intent of the last line.",
            "Keywords": settings.MTURK_KEYWORDS,
            "Reward": f"{campaign.reward:.2f}",
            "AssignmentDurationInSeconds": campaign.time_limit_minutes * 60,
            "AutoApprovalDelayInSeconds": settings.MTURK_AUTO_APPROVAL_HOURS * 3600,
            "QualificationRequirements": qualification_requirements(quiz_qualification),
        }

    def _create_hit(self, publication: Publication, hit: HIT, url: str, hit_type: str) -> str:
        params = {
            "HITTypeId": hit_type,
            "MaxAssignments": hit.required_workers,
            "LifetimeInSeconds": settings.MTURK_LIFETIME_HOURS * 3600,
            "Question": external_question(url),
            "RequesterAnnotation": f"campaign {hit.campaign_id} hit {hit.pk}",
            "UniqueRequestToken": _token("hit", _scope(publication), hit.pk),
        }
        try:
            return self._call("create_hit_with_hit_type", **params)["HIT"]["HITId"]
        except calls.PlatformCallError:
            # an earlier try may have made it (its answer lost; a repeat of its token is refused):
            # MTurk's refusal names no HIT, so the HIT type's HITs are listed to find it
            found = self._listed_hit(hit_type, params["RequesterAnnotation"])
            if found is None:
                raise
            return found

    def _listed_hit(self, hit_type: str, annotation: str) -> str | None:
        """Our HIT of this HIT type and annotation among the requester's HITs, if MTurk made it.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_ListHITsOperation.html"""
        token = None
        while True:
            page = self._call("list_hits", MaxResults=100, **({"NextToken": token} if token else {}))
            for listed in page.get("HITs", []):
                if listed.get("HITTypeId") == hit_type and listed.get("RequesterAnnotation") == annotation:
                    return listed["HITId"]
            token = page.get("NextToken")
            if not token:
                return None

    def _adopt_listed_hits(self, publication: Publication, quiz_hit_type: str = "") -> int:
        """HITs an earlier publish made whose answer was lost more than a token's life ago: found
        among the requester's HITs by HIT type and annotation and recorded, so none is made twice.
        ListHITs: https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_ListHITsOperation.html"""
        wanted = {
            f"campaign {hit.campaign_id} hit {hit.pk}": hit.pk
            for hit in publication.campaign.hits.filter(external_id="").only("pk", "campaign_id")
        }
        adopted, token = 0, None
        while wanted:
            page = self._call("list_hits", MaxResults=100, **({"NextToken": token} if token else {}))
            for listed in page.get("HITs", []):
                pk = (
                    wanted.get(listed.get("RequesterAnnotation", ""))
                    if listed.get("HITTypeId") in (publication.external_id, quiz_hit_type or publication.external_id)
                    else None
                )
                if pk is not None:
                    adopted += HIT.objects.filter(pk=pk, external_id="").update(external_id=listed["HITId"])
                    wanted.pop(listed["RequesterAnnotation"])
            token = page.get("NextToken")
            if not token:
                break
        return adopted

    def worker_preview_url(self, publication: Publication) -> str:
        return f"{WORKER_SITE[publication.sandbox]}/projects/{publication.external_id}/tasks"

    # --- sync --------------------------------------------------------------------------------------

    def fetch_results(self, publication: Publication) -> list[ExternalResult]:
        """The assignments of every published HIT not yet settled: a HIT whose every seat holds
        approved work can report nothing new (a seat added later, or a rejection's replacement,
        makes it unsettled again), so it is not listed again (MTurk throttles)."""
        results = []
        for hit_id in _unsettled_hit_ids(publication):
            results += self.results_for_hit(hit_id)
        return results

    def results_for_hit(self, hit_id: str) -> list[ExternalResult]:
        results, token = [], None
        while True:
            page = self._call(
                "list_assignments_for_hit",
                HITId=hit_id,
                AssignmentStatuses=["Submitted", "Approved", "Rejected"],
                MaxResults=100,
                **({"NextToken": token} if token else {}),
            )
            results += [self._result(hit_id, a) for a in page.get("Assignments", [])]
            token = page.get("NextToken")
            if not token:
                break
        rejected = self._rejected.setdefault(hit_id, set())
        rejected.update(result.assignment_id for result in results if result.status == base.REJECTED)
        return results

    @staticmethod
    def _result(hit_id: str, assignment: dict) -> ExternalResult:
        status = assignment["AssignmentStatus"]
        return ExternalResult(
            assignment["AssignmentId"],
            assignment["WorkerId"],
            _STATUS.get(status, base.ACTIVE),
            parse_answers(assignment.get("Answer", "")),
            platform_status=status,
            hit_id=hit_id,
        )

    def approve(self, publication: Publication, result: ExternalResult) -> None:
        self._call("approve_assignment", AssignmentId=result.assignment_id, RequesterFeedback="Thank you!")

    def reject(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        self._call("reject_assignment", AssignmentId=result.assignment_id, RequesterFeedback=reason[:1024])
        if result.hit_id:
            self._rejected.setdefault(result.hit_id, set()).add(result.assignment_id)

    def pay_bonuses(self, publication: Publication, entries: list[PaymentEntry]) -> int:
        """One send_bonus per entry, with the entry's UniqueRequestToken recorded before the call:
        a repeat (after a lost answer, or an interrupted sync) gets MTurk's "already used". A token
        older than MTurk honours is never resent: the assignment's bonus payments are listed first;
        one found is recorded as paid, and only a bonus MTurk never paid is sent, with a new token.
        Each entry is paid on its own (an account short of funds refuses each, and the others go
        on); the failures are raised together after the last."""
        paid, errors = 0, []
        for entry in entries:
            try:
                paid += self._pay_bonus(entry)
            except PlatformError as error:
                errors.append(f"bonus {entry.pk}: {error}")
        if errors:
            raise PlatformError(f"bonuses: {len(errors)} failed: " + "; ".join(errors)[:1500])
        return paid

    def _pay_bonus(self, entry: PaymentEntry) -> int:
        from labeling.services import payments

        submission = entry.assignment.platform_submission
        token = payments.reserve_request_token(entry)
        age = payments.request_token_age(token)
        if age is None or age > TOKEN_TRUSTED_FOR:
            if self._bonus_paid(submission.external_id, submission.worker_external_id, entry.amount):
                return payments.mark_entries_paid(ids=[entry.pk])
            token = payments.renew_request_token(entry, token)
        params = {
            "WorkerId": submission.worker_external_id,
            "AssignmentId": submission.external_id,
            "BonusAmount": f"{entry.amount:.2f}",
            "Reason": "Quiz bonus: thank you for careful work.",
            "UniqueRequestToken": token,
        }
        try:
            self._call("send_bonus", **params)
        except calls.PlatformCallError as error:
            if not _ALREADY_DONE.search(error.detail):
                raise
        return payments.mark_entries_paid(ids=[entry.pk])

    def _bonus_paid(self, assignment_id: str, worker_id: str, amount: Decimal) -> bool:
        """Whether MTurk lists a bonus of `amount` to this worker for this assignment (our ledger
        holds one bonus per assignment, so one found is ours).
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_ListBonusPaymentsOperation.html"""
        token = None
        while True:
            page = self._call(
                "list_bonus_payments",
                AssignmentId=assignment_id,
                MaxResults=100,
                **({"NextToken": token} if token else {}),
            )
            for payment in page.get("BonusPayments", []):
                if payment.get("WorkerId") == worker_id and Decimal(payment.get("BonusAmount", "0")) == amount:
                    return True
            token = page.get("NextToken")
            if not token:
                return False

    def add_places(self, publication: Publication, hit: HIT, places: int) -> None:
        """One more worker for `hit`: MaxAssignments becomes `places` plus the HIT's rejected
        assignments (each of which used a place for good), unless MTurk already has that many (an
        earlier try whose answer or token was lost)."""
        self._ensure_places(publication, hit, places + self._rejected_count(hit.external_id))

    def rejected_places(self) -> list[str]:
        """The HITs (MTurk ids) with a rejected assignment that this adapter listed or rejected."""
        return sorted(hit_id for hit_id, rejected in self._rejected.items() if rejected)

    def replace_rejected(self, publication: Publication, hit: HIT) -> int:
        """An assignment more for each rejected one, so the HIT can still gather `required_workers`
        answers: MTurk never offers a rejected assignment's place again. Returns how many were added.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_CreateAdditionalAssignmentsForHITOperation.html"""
        return self._ensure_places(publication, hit, hit.required_workers + self._rejected_count(hit.external_id))

    def _rejected_count(self, hit_id: str) -> int:
        if hit_id not in self._rejected:  # not listed by this adapter: asked
            page = self._call("list_assignments_for_hit", HITId=hit_id, AssignmentStatuses=["Rejected"], MaxResults=100)
            self._rejected[hit_id] = {a["AssignmentId"] for a in page.get("Assignments", [])}
        return len(self._rejected[hit_id])

    def _ensure_places(self, publication: Publication, hit: HIT, wanted: int) -> int:
        """MaxAssignments raised to `wanted` (the HIT's lifetime extended first when it ends soon),
        with a UniqueRequestToken per (HIT, target), so a retry is MTurk's "already done"; returns
        how many were added. Refused for a HIT made with fewer than 10 assignments that would need
        10 or more, which MTurk forbids (InvalidMaximumAssignmentsIncrease): the error names the HIT
        and why it cannot be completed on MTurk.
        GetHIT: https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_GetHITOperation.html"""
        listed = self._call("get_hit", HITId=hit.external_id)["HIT"]
        current = int(listed["MaxAssignments"])
        if current >= wanted:
            return 0
        if current < TEN_ASSIGNMENTS <= wanted:
            raise PlatformError(
                f"HIT {hit.external_id} cannot be completed on MTurk: it needs {wanted} assignments "
                f"({hit.required_workers} answers and {wanted - hit.required_workers} rejected), and MTurk cannot "
                f"extend a HIT created with fewer than {TEN_ASSIGNMENTS} assignments to {TEN_ASSIGNMENTS} or more; "
                f"it keeps {current}"
            )
        self._extend_if_ending(hit.external_id, listed.get("Expiration"))
        params = {
            "HITId": hit.external_id,
            "NumberOfAdditionalAssignments": wanted - current,
            "UniqueRequestToken": _token("seats", _scope(publication), hit.pk, wanted),
        }
        try:
            self._call("create_additional_assignments_for_hit", **params)
        except calls.PlatformCallError as error:
            if not _ALREADY_DONE.search(error.detail):
                raise
        return wanted - current

    def request_return(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        """MTurk has no return request: an abandoned assignment expires at its duration."""

    def block(self, worker_id: str) -> None:
        """Give a blocked worker our "blocked" qualification, which the HIT type excludes."""
        if settings.MTURK_BLOCK_QUALIFICATION_ID:
            self._call(
                "associate_qualification_with_worker",
                QualificationTypeId=settings.MTURK_BLOCK_QUALIFICATION_ID,
                WorkerId=worker_id,
                IntegerValue=1,
                SendNotification=False,
            )

    def _extend_if_ending(self, hit_id: str, expiration) -> None:
        """A place added to an expired HIT finds no worker (an expired HIT no longer appears in
        searches), nor one added to a HIT that expires before a worker could find and finish it:
        a HIT ending within PLACE_RUNWAY_SHARE of MTURK_LIFETIME_HOURS is given a fresh lifetime
        (MTURK_LIFETIME_HOURS from now) before the place is added.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_UpdateExpirationForHITOperation.html"""
        from django.utils import timezone

        lifetime = timedelta(hours=settings.MTURK_LIFETIME_HOURS)
        if expiration is None or expiration > timezone.now() + lifetime * PLACE_RUNWAY_SHARE:
            return  # None: GetHIT always answers one; a trimmed answer (a test's) is left alone
        self._call("update_expiration_for_hit", HITId=hit_id, ExpireAt=timezone.now() + lifetime)

    def close(self, publication: Publication) -> None:
        """Expire every HIT of the campaign (an ExpireAt in the past expires a HIT at once; repeating
        it is harmless). Each HIT is tried; the errors are raised together after the last.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_UpdateExpirationForHITOperation.html"""
        from datetime import UTC, datetime

        errors = []
        for hit_id in publication.campaign.hits.exclude(external_id="").values_list("external_id", flat=True):
            try:
                self._call("update_expiration_for_hit", HITId=hit_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
            except PlatformError as error:
                errors.append(f"HIT {hit_id}: {error}")
        if errors:
            raise PlatformError("; ".join(errors)[:2000])
