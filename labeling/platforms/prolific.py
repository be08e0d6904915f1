"""Prolific through its REST API (https://api.prolific.com/api/v1/) with `requests`.

A campaign becomes one study: its URL is our signed entry link with Prolific's
{{%PROLIFIC_PID%}}, {{%STUDY_ID%}} and {{%SESSION_ID%}} placeholders, one place per HIT seat
(a participant takes a study once, so each does one HIT), the reward per place in minor units,
and one completion code (kept in Publication.completion_code and shown by our return page).

The token comes only from the environment (PROLIFIC_API_TOKEN), is sent only in the
Authorization header and never stored or logged. `make_session` is the one transport point: tests
either intercept HTTP with `responses` or install the stateful stand-in (labeling.platforms.standin)
there, so nothing touches the network. `landing_submission` looks one submission up for a
landing's check, in one short try; the job that checks a landing (labeling.platforms.prolific_checks) tries
it again with backoff, while the participant's page polls.

Money: Prolific pays rewards in the workspace's currency, so the workspace of PROLIFIC_PROJECT_ID
must pay in the campaign's currency (read before anything is created), and the reward must reach
Prolific's minimum hourly rate (PROLIFIC_MIN_HOURLY_RATE_GBP / _USD; documented at
https://researcher-help.prolific.com/hc/en-gb/articles/4407695146002-Prolific-s-payment-principles;
Prolific checks it at the median completion time: https://researcher-help.prolific.com/en/article/4dd6a0).
Rejecting a submission of a full study, or a participant returning one awaiting review, pauses the
study (https://researcher-help.prolific.com/hc/en-gb/articles/360010963354-Pausing-stopping-a-study);
sync starts every paused study of the campaign again while the campaign is open, and pauses them
while the researcher paused it (`keep_recruiting`, labeling.platforms.prolific_studies).

Bonuses (labeling.platforms.prolific_bonuses): Prolific's bulk bonus is two calls: "set up"
(creates an unpaid payment object, at most 200 participants each) and "pay" (NOT idempotent: paying one object twice pays twice). The ledger records the object's id on
the entries after set-up, and the start of the one pay call before it is sent; a pay call that may
or may not have gone through is never sent again (see labeling.services.payments.payment_unsure).
"""

import os
import secrets
from decimal import Decimal

from django.conf import settings

from labeling.models import HIT, Campaign, Publication
from labeling.platforms import base, calls, checks, qualification
from labeling.platforms.base import ExternalResult, PlatformError
from labeling.platforms.costs import CostPreview, cost_preview
from labeling.platforms.prolific_bonuses import ProlificBonuses
from labeling.platforms.prolific_studies import (
    ProlificStudies,
    minor_units,
    paid_estimate,
    paid_places,
    quiz_places,
    quiz_study_id,
    refused_outright,
    time_limit_refusals,
)

API = "https://api.prolific.com/api/v1"
TIMEOUT_SECONDS = (5, 30)  # connect, read
# every submission status Prolific documents
# (https://docs.prolific.com/api-reference/submissions, "status"; the open-source CLI client
# prolific-oss/cli lists the same words in model/submission_counts.go); anything else
# (e.g. the brief "PROCESSING" after a decision) is UNKNOWN: recorded, nothing done, read again next sync
_STATUS = {
    "RESERVED": base.ACTIVE,  # a place held for a participant who has not started yet
    "ACTIVE": base.ACTIVE,
    "AWAITING REVIEW": base.SUBMITTED,
    "APPROVED": base.APPROVED,
    # approved with part of the reward: the share is not reported (ExternalResult.share_unknown)
    "PARTIALLY APPROVED": base.APPROVED,
    "REJECTED": base.REJECTED,
    "RETURNED": base.RETURNED,
    # past the maximum time, yet "Participants can still complete their submission if they go over
    # the time limit, if they are still active on the study and are not replaced"
    # (https://researcher-help.prolific.co/hc/en-gb/articles/360009094694): not final (sync._timed_out)
    "TIMED-OUT": base.TIMED_OUT,
    "SCREENED OUT": base.RETURNED,
}
PARTIALLY_APPROVED = "PARTIALLY APPROVED"
# Prolific requires a rejection message of at least 100 characters and a category
MIN_REJECTION_MESSAGE = 100
REJECTION_CATEGORY = "LOW_EFFORT"
# the participant-group filter of a study: only the group's members may take it
# (https://docs.prolific.com/api-reference/filters; https://docs.prolific.com/api-reference/participant-groups)
ALLOWLIST_FILTER = "participant_group_allowlist"
REJECTION_TAIL = (
    " The known-answer dialogues in this task check careful reading; too few of them were answered as expected."
)


def make_session():
    """The one transport point: a `requests` session, or the stand-in's (labeling.platforms.standin)
    when one is installed or PLATFORM_STANDIN is set."""
    import requests

    from labeling.platforms import standin

    if standin.installed("prolific") is not None:
        return standin.installed("prolific").session()
    if settings.PLATFORM_STANDIN:
        return standin.shared("prolific").session()
    token = os.environ.get("PROLIFIC_API_TOKEN", "")
    if not token:
        raise PlatformError("PROLIFIC_API_TOKEN is not set in the environment; the Prolific adapter needs it")
    session = requests.Session()
    session.headers.update({"Authorization": f"Token {token}", "Content-Type": "application/json"})
    return session


def rejection_message(reason: str) -> str:
    message = reason.strip()
    return message if len(message) >= MIN_REJECTION_MESSAGE else (message + REJECTION_TAIL)[:2000]


class ProlificPlatform(ProlificStudies, ProlificBonuses):
    name = "prolific"
    requests_returns = True  # sync asks for returns of completed work ours never received

    def __init__(self, session=None) -> None:
        self._session = session
        self._workspace = ""  # the project's workspace, once read

    @property
    def session(self):
        if self._session is None:
            self._session = make_session()
        return self._session

    def _request(self, operation: str, method: str, path: str, *, repeatable: bool, json=None):
        def send():
            response = self.session.request(method, f"{API}{path}", json=json, timeout=TIMEOUT_SECONDS)
            if not 200 <= response.status_code < 300:
                retry_after = (getattr(response, "headers", None) or {}).get("Retry-After")
                raise calls.PlatformHTTPError(response.status_code, response.text, retry_after)
            return response.json() if response.content else {}

        return calls.call(self.name, operation, send, repeatable=repeatable)

    # --- publishing ------------------------------------------------------------------------------

    def cost_preview(self, campaign: Campaign, base_url: str = "") -> CostPreview:
        """The cost of the paid places and the quiz's places, with Prolific's service fee on rewards
        and bonuses and VAT on that fee (PROLIFIC_FEE_RATE, PROLIFIC_VAT_RATE); the hourly rate
        against PROLIFIC_MIN_HOURLY_RATE_<currency>; what refuses publishing (the time limit below
        Prolific's minimum maximum time among them). The workspace's currency is read when publishing.
        Fees: https://researcher-help.prolific.co/hc/en-gb/articles/360009222573-Bonus-payments
        ("bonus payments are charged at the same commission rate (+ VAT if applicable)")."""
        publication = campaign.publications.filter(platform=self.name).first()
        published = publication.places if publication is not None and publication.external_id else 0
        setup = campaign.platform_qualifications.filter(platform=self.name).first()
        quiz_published = setup.places if setup is not None and setup.quiz_external_id else 0
        preview = cost_preview(
            seats=max(0, paid_places(campaign) - published),
            reward=campaign.reward,
            bonus=campaign.bonus,
            bonus_share=Decimal(str(settings.PLATFORM_EXPECTED_BONUS_SHARE)),
            fee_rate=Decimal(str(settings.PROLIFIC_FEE_RATE)),
            currency=campaign.currency,
            quiz_seats=max(0, quiz_places(campaign) - quiz_published) if campaign.qualification_required else 0,
            quiz_reward=campaign.qualification_reward,
            vat_rate=Decimal(str(settings.PROLIFIC_VAT_RATE)),
        )
        setting = f"PROLIFIC_MIN_HOURLY_RATE_{campaign.currency}"
        pay = checks.hourly_pay(campaign, getattr(settings, setting, None), platform_timed=True)
        refusals = (
            []
            if campaign.currency in ("GBP", "USD")
            else [f"Prolific pays in GBP or USD; the campaign is in {campaign.currency}"]
        )
        refusals += qualification.pay_refusals(campaign, getattr(settings, setting, None), "Prolific", setting)
        refusals += time_limit_refusals(campaign)
        return checks.with_checks(preview, pay, refusals + pay.refusals("Prolific", setting))

    def publish(self, campaign: Campaign, base_url: str) -> int:
        """All or nothing: the participant group, then both studies created as drafts (each id
        saved as soon as Prolific answers), then the paid study published, then the quiz study (a
        live quiz for a study that does not exist would pay people for nothing). A refusal before
        anything was published deletes the drafts made (`_undo_drafts`); a lost answer or a 5xx
        leaves them for the next try, which reads each study's state before publishing it."""
        from labeling.platforms.publications import publication_for
        from labeling.services.entry_tokens import platform_links

        checks.refuse_unless_publishable(campaign, self.cost_preview(campaign, base_url))
        existing = campaign.publications.filter(platform=self.name).first()
        if existing is None or existing.status == Publication.DRAFT:
            self._check_workspace_currency(campaign)
        publication = publication_for(campaign, self.name, completion_code=secrets.token_hex(4).upper())
        url = platform_links(base_url, campaign)["prolific"]
        try:
            quiz = self._quiz_draft(campaign, url) if campaign.qualification_required else None
            if not publication.external_id:
                self._create_paid_study(campaign, publication, url, quiz)
            published = 0
            if publication.status == Publication.DRAFT:
                self._publish_study(publication.external_id, "publish study")
                Publication.objects.filter(pk=publication.pk).update(status=Publication.ACTIVE)
                publication.status, published = Publication.ACTIVE, publication.places
        except calls.PlatformCallError as error:
            if publication.status == Publication.DRAFT and refused_outright(error):
                self._undo_drafts(campaign, publication)
            raise
        if quiz is not None:
            self._publish_quiz(quiz)
        return published or self._more_places(campaign, publication)

    def _create_paid_study(self, campaign, publication, url: str, quiz) -> None:
        places = paid_places(campaign)
        study = self._study(campaign, url, publication.completion_code, places)
        if quiz is not None:  # only the quiz's passers, whom sync adds to the group
            study["filters"] = [{"filter_id": ALLOWLIST_FILTER, "selected_values": [quiz.external_id]}]
        study = self._create_study(study, "create study")
        Publication.objects.filter(pk=publication.pk).update(external_id=study["id"], places=places)
        publication.external_id, publication.places = study["id"], places

    def _more_places(self, campaign: Campaign, publication: Publication) -> int:
        """HITs added since publishing: more places (an absolute number)."""
        places = paid_places(campaign)
        if places <= publication.places:
            return 0
        before = publication.places
        self._set_places(publication, places)
        return places - before

    def _check_workspace_currency(self, campaign: Campaign) -> None:
        """Prolific pays rewards in the workspace's currency: a campaign in another one would pay
        pence for cents. The project's workspace, then that workspace's currency, both read here.
        https://docs.prolific.com/api-reference/projects ("workspace")
        https://docs.prolific.com/api-reference/workspaces/get-workspace-balance ("currency_code")"""
        project = settings.PROLIFIC_PROJECT_ID
        workspace = self._workspace_id()
        path = f"/workspaces/{workspace}/balance/"
        currency = self._request("get workspace balance", "GET", path, repeatable=True).get("currency_code") or ""
        if currency.upper() != campaign.currency:
            raise PlatformError(
                f"campaign {campaign.pk} is in {campaign.currency} but Prolific workspace {workspace} (project "
                f"{project}, PROLIFIC_PROJECT_ID) pays in {currency or 'an unknown currency'}: its rewards would "
                "be paid in the wrong currency. Set the campaign's currency to the workspace's, "
                "or PROLIFIC_PROJECT_ID to a project in a workspace of the campaign's currency"
            )

    def _workspace_id(self) -> str:
        """The workspace of PROLIFIC_PROJECT_ID (read once per adapter)."""
        project = settings.PROLIFIC_PROJECT_ID
        if not project:
            raise PlatformError("PROLIFIC_PROJECT_ID is not set: name the Prolific project studies are created in")
        if not self._workspace:
            answer = self._request("get project", "GET", f"/projects/{project}/", repeatable=True)
            self._workspace = answer.get("workspace", "")
        return self._workspace

    def _study(self, campaign: Campaign, url: str, completion_code: str, places: int) -> dict:
        # https://docs.prolific.com/api-reference/studies (create a study: project, reward in minor units)
        return {
            "project": settings.PROLIFIC_PROJECT_ID,
            "name": campaign.name[:120],
            "internal_name": f"campaign {campaign.pk}",
            "description": (
                campaign.description
                or "Read short dialogues from films and choose the emotion or intent of the last line."
            ),
            "external_study_url": url,
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {
                    "code": completion_code,
                    "code_type": "COMPLETED",
                    "actions": [{"action": "MANUALLY_REVIEW"}],
                }
            ],
            "total_available_places": places,
            "estimated_completion_time": paid_estimate(campaign),
            # at least Prolific's minimum for the estimate: checked before anything is created
            # (prolific_studies.time_limit_refusals)
            "maximum_allowed_time": campaign.time_limit_minutes,
            "reward": minor_units(campaign.reward),
            "device_compatibility": ["desktop"],
        }

    def worker_preview_url(self, publication: Publication) -> str:
        return f"https://app.prolific.com/researcher/workspaces/studies/{publication.external_id}"

    # --- sync --------------------------------------------------------------------------------------

    def fetch_results(self, publication: Publication) -> list[ExternalResult]:
        """The paid study's submissions and, when the campaign has one, the quiz study's."""
        results = self._submissions(publication.external_id)
        quiz = quiz_study_id(publication.campaign_id)
        return results + (self._submissions(quiz) if quiz else [])

    def _submissions(self, study_id: str) -> list[ExternalResult]:
        results, path = [], f"/studies/{study_id}/submissions/"
        while path:
            page = self._request("list submissions", "GET", path, repeatable=True)
            results += [self._result(row) for row in page.get("results", [])]
            following = ((page.get("_links") or {}).get("next") or {}).get("href")
            path = following.removeprefix(API) if following else ""
        return results

    @staticmethod
    def status_of(word: str) -> str:
        """Prolific's word for a submission's state, normalised (UNKNOWN for a word not documented)."""
        return _STATUS.get(word, base.UNKNOWN)

    @staticmethod
    def _result(row: dict) -> ExternalResult:
        status = row.get("status", "")
        answers = {"study_code": row["study_code"]} if row.get("study_code") else {}
        return ExternalResult(
            row["id"],
            row.get("participant_id", ""),
            ProlificPlatform.status_of(status),
            answers,
            platform_status=status,
            share_unknown=status == PARTIALLY_APPROVED,
            time_taken=_time_taken(row),
        )

    def approve(self, publication: Publication, result: ExternalResult) -> None:
        self._transition(result, {"action": "APPROVE"})

    def reject(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        body = {"action": "REJECT", "message": rejection_message(reason), "rejection_category": REJECTION_CATEGORY}
        self._transition(result, body)

    def _transition(self, result: ExternalResult, body: dict) -> None:
        # https://docs.prolific.com/api-reference/submissions (transition a submission)
        path = f"/submissions/{result.assignment_id}/transition/"
        self._request(f"{body['action'].lower()} submission", "POST", path, repeatable=True, json=body)

    def add_places(self, publication: Publication, hit: HIT, places: int) -> None:
        seats = paid_places(publication.campaign, extra={hit.pk: places})
        self._set_places(publication, seats)

    def request_return(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        """Documented for completed submissions (AWAITING REVIEW): sync sends it only for those.
        https://docs.prolific.com/api-reference/submissions (request a return)
        https://participant-help.prolific.com/en/articles/445041-how-to-return-a-submission-on-prolific"""
        path = f"/submissions/{result.assignment_id}/request-return/"
        self._request("request return", "POST", path, repeatable=True, json={"request_return_reasons": [reason]})


def _time_taken(row: dict) -> int | None:
    """Prolific's own time for a submission, from its start to its completion: what its median
    completion time, and so its pay check, is made of (https://researcher-help.prolific.com/en/article/4dd6a0).
    The listing returns each submission's "start timestamp" and sorts by completed_at and time_taken
    (https://docs.prolific.com/api-reference/studies/get-study-submissions): time_taken when given,
    else completed_at - started_at; None while either is missing."""
    from datetime import datetime

    if isinstance(row.get("time_taken"), int | float):
        return max(0, int(row["time_taken"]))
    try:
        started = datetime.fromisoformat(str(row["started_at"]).replace("Z", "+00:00"))
        completed = datetime.fromisoformat(str(row["completed_at"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return None
    return max(0, int((completed - started).total_seconds()))


# A partial approval's share is a field of the transition's request only
# (https://docs.prolific.com/api-reference/submissions/transition-submission); the submission object
# reports the status, never the share (https://docs.prolific.com/api-reference/submissions/submission-object).
# We never approve in part, so a PARTIALLY APPROVED submission was decided on Prolific's site: its share
# is recorded as unknown (sync withholds the reward entry until a researcher records the share read on
# Prolific: labeling.services.payments.shares_unknown, record_reward_share), never as 0 or the full reward.


# --- checking a landing (a job's lookup, labeling.platforms.prolific_checks; kept apart from sync) ---------


def landing_timeout() -> tuple[float, float]:
    """One try of the landing check waits this long for Prolific (connect, read): its reference names
    no figure but warns that high volumes "can also create latency"
    (https://docs.prolific.com/documentation/core-concepts/managing-high-loads), so the read waits
    PROLIFIC_LANDING_TIMEOUT_SECONDS (10 s by default: a slow answer is still an answer; the check
    runs on its own queue and the participant's page polls meanwhile); the job tries again with backoff."""
    return (3.05, float(settings.PROLIFIC_LANDING_TIMEOUT_SECONDS))


class SubmissionLookupFailed(PlatformError):
    """Prolific could not answer a submission lookup just now (a timeout, a dropped connection,
    429, 5xx): worth asking again, after `retry_after` seconds when Prolific named a wait."""

    def __init__(self, message: str, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def landing_submission(platform: ProlificPlatform, session_id: str) -> dict | None:
    """Prolific's submission `session_id` (the SESSION_ID a landing brings), or None when Prolific
    knows no such submission (404), in one try. A failure worth another try (a timeout, a
    connection error, 429, 5xx) raises SubmissionLookupFailed; any other (not configured, another
    4xx) PlatformError. Either way the landing is not proven, and fails closed.

    "Retrieve a submission", GET /api/v1/submissions/{id}/ (id: "the ID we pass to the survey
    platform using %SESSION_ID%"), answers the submission's `study_id`, `participant` (the list
    of a study's submissions calls it `participant_id`) and `status` (https://docs.prolific.com/api-reference/submissions/get-submission; the statuses:
    https://docs.prolific.com/api-reference/submissions/submission-object)."""
    from requests import exceptions as http

    try:
        # `request`, the one call the adapter's transport point answers (a stand-in's session too)
        response = platform.session.request("GET", f"{API}/submissions/{session_id}/", timeout=landing_timeout())
    except (http.ConnectionError, http.Timeout) as error:
        raise SubmissionLookupFailed(f"prolific get submission: {type(error).__name__}") from error
    if response.status_code == 404:
        return None
    if response.status_code == 429 or response.status_code >= 500:
        retry_after = (getattr(response, "headers", None) or {}).get("Retry-After")
        raise SubmissionLookupFailed(f"prolific get submission: HTTP {response.status_code}", retry_after)
    if response.status_code != 200:
        raise PlatformError(f"prolific get submission: HTTP {response.status_code}")
    return response.json()
