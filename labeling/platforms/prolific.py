"""Prolific through its REST API (https://api.prolific.com/api/v1/) with `requests`.

A campaign becomes one study: its URL is our signed entry link with Prolific's
{{%PROLIFIC_PID%}}, {{%STUDY_ID%}} and {{%SESSION_ID%}} placeholders, one place per HIT seat
(a participant takes a study once, so each does one HIT), the reward per place in minor units,
and one completion code (kept in Publication.completion_code and shown by our return page).

The token comes only from the environment (PROLIFIC_API_TOKEN), is sent only in the
Authorization header and never stored or logged. `make_session` is the one point tests may
replace; tests intercept HTTP with `responses`, so nothing touches the network.

Money: Prolific pays rewards in the workspace's currency, so the workspace of PROLIFIC_PROJECT_ID
must pay in the campaign's currency (read before anything is created), and the reward must reach
Prolific's minimum hourly rate (PROLIFIC_MIN_HOURLY_RATE_GBP / _USD; documented at
https://researcher-help.prolific.com/hc/en-gb/articles/4407695146002-Prolific-s-payment-principles;
Prolific checks it at the median completion time: https://researcher-help.prolific.com/en/article/4dd6a0).
Rejecting a submission of a full study, or a participant returning one awaiting review, pauses the
study (https://researcher-help.prolific.com/hc/en-gb/articles/360010963354-Pausing-stopping-a-study);
sync starts it again while places remain (`resume_after_rejection`).

Bonuses: Prolific's bulk bonus is two calls: "set up" (creates an unpaid payment object) and
"pay" (NOT idempotent: paying one object twice pays twice). The ledger records the object's id on
the entries after set-up, and the start of the one pay call before it is sent; a pay call that may
or may not have gone through is never sent again (see labeling.payments.payment_unsure).
"""

import os
import secrets
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings

from labeling.models import HIT, Campaign, PaymentEntry, PlatformQualification, Publication, QualificationResult
from labeling.platforms import base, calls, checks, qualification
from labeling.platforms.base import ExternalResult, PlatformError
from labeling.platforms.costs import CostPreview, cost_preview

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
    "PARTIALLY APPROVED": base.APPROVED,  # approved with part of the reward, on Prolific's site
    "REJECTED": base.REJECTED,
    "RETURNED": base.RETURNED,
    "TIMED-OUT": base.RETURNED,
    "SCREENED OUT": base.RETURNED,
}
STUDY_PAUSED = "PAUSED"
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
    import requests

    token = os.environ.get("PROLIFIC_API_TOKEN", "")
    if not token:
        raise PlatformError("PROLIFIC_API_TOKEN is not set in the environment; the Prolific adapter needs it")
    session = requests.Session()
    session.headers.update({"Authorization": f"Token {token}", "Content-Type": "application/json"})
    return session


def minor_units(amount: Decimal) -> int:
    """Prolific's rewards are in pence or cents."""
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def rejection_message(reason: str) -> str:
    message = reason.strip()
    return message if len(message) >= MIN_REJECTION_MESSAGE else (message + REJECTION_TAIL)[:2000]


class ProlificPlatform:
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
                raise calls.PlatformHTTPError(response.status_code, response.text)
            return response.json() if response.content else {}

        return calls.call(self.name, operation, send, repeatable=repeatable)

    # --- publishing ------------------------------------------------------------------------------

    def cost_preview(self, campaign: Campaign, base_url: str = "") -> CostPreview:
        """The cost, the hourly rate against PROLIFIC_MIN_HOURLY_RATE_<currency>, and what refuses
        publishing (the workspace's currency is read when publishing)."""
        publication = campaign.publications.filter(platform=self.name).first()
        published = publication.places if publication is not None and publication.external_id else 0
        preview = cost_preview(
            seats=max(0, _seats(campaign) - published),
            reward=campaign.reward,
            bonus=campaign.bonus,
            bonus_share=Decimal(str(settings.PLATFORM_EXPECTED_BONUS_SHARE)),
            fee_rate=Decimal(str(settings.PROLIFIC_FEE_RATE)),
            currency=campaign.currency,
        )
        setting = f"PROLIFIC_MIN_HOURLY_RATE_{campaign.currency}"
        pay = checks.hourly_pay(campaign, getattr(settings, setting, None))
        refusals = (
            []
            if campaign.currency in ("GBP", "USD")
            else [f"Prolific pays in GBP or USD; the campaign is in {campaign.currency}"]
        )
        refusals += qualification.pay_refusals(campaign, getattr(settings, setting, None), "Prolific", setting)
        return checks.with_checks(preview, pay, refusals + pay.refusals("Prolific", setting))

    def publish(self, campaign: Campaign, base_url: str) -> int:
        """Create the study (once: its id is saved as soon as Prolific answers) and publish it.
        A study created by a try whose answer was lost stays an unpublished draft on Prolific."""
        from labeling.entry_tokens import platform_links
        from labeling.platforms.publications import publication_for

        checks.refuse_unless_publishable(campaign, self.cost_preview(campaign, base_url))
        existing = campaign.publications.filter(platform=self.name).first()
        if existing is None or existing.status == Publication.DRAFT:
            self._check_workspace_currency(campaign)
        publication = publication_for(campaign, self.name, completion_code=secrets.token_hex(4).upper())
        url = platform_links(base_url, campaign)["prolific"]
        quiz = self._qualification(campaign, url) if campaign.qualification_required else None
        places = _seats(campaign)
        if not publication.external_id:
            study = self._study(campaign, url, publication.completion_code, places)
            if quiz is not None:  # only the quiz's passers, whom sync adds to the group
                study["filters"] = [{"filter_id": ALLOWLIST_FILTER, "selected_values": [quiz.external_id]}]
            study = self._request("create study", "POST", "/studies/", repeatable=False, json=study)
            Publication.objects.filter(pk=publication.pk).update(external_id=study["id"], places=places)
            publication.external_id, publication.places = study["id"], places
        if publication.status == Publication.DRAFT:
            path = f"/studies/{publication.external_id}/transition/"
            self._request("publish study", "POST", path, repeatable=True, json={"action": "PUBLISH"})
            Publication.objects.filter(pk=publication.pk).update(status=Publication.ACTIVE)
            publication.status = Publication.ACTIVE
            return publication.places
        if places > publication.places:  # HITs added since: more places
            before = publication.places
            self._set_places(publication, places)
            return places - before
        return 0

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
            "estimated_completion_time": max(1, min(campaign.time_limit_minutes, campaign.estimated_minutes)),
            "maximum_allowed_time": campaign.time_limit_minutes,
            "reward": minor_units(campaign.reward),
            "device_compatibility": ["desktop"],
        }

    # --- the qualification step (labeling.qualification) --------------------------------------------

    def _qualification(self, campaign: Campaign, url: str) -> PlatformQualification:
        """The participant group of the quiz's passers (which the paid study allowlists) and the quiz
        study (without that filter), each created once and recorded at once; the study published."""
        setup = qualification.platform_setup(campaign, self.name)
        if not setup.external_id:
            setup.external_id = self._create_group(campaign)
            PlatformQualification.objects.filter(pk=setup.pk).update(external_id=setup.external_id)
        if not setup.completion_code:
            setup.completion_code = secrets.token_hex(4).upper()
            PlatformQualification.objects.filter(pk=setup.pk).update(completion_code=setup.completion_code)
        if not setup.quiz_external_id:
            places = _quiz_seats(campaign)
            body = self._quiz_study(campaign, url, setup.completion_code, places)
            study = self._request("create quiz study", "POST", "/studies/", repeatable=False, json=body)
            setup.quiz_external_id, setup.places = study["id"], places
            PlatformQualification.objects.filter(pk=setup.pk).update(quiz_external_id=study["id"], places=places)
        elif _quiz_seats(campaign) > setup.places:  # seats opened since: more places (an absolute number)
            places = _quiz_seats(campaign)
            path = f"/studies/{setup.quiz_external_id}/"
            self._request("set quiz places", "PATCH", path, repeatable=True, json={"total_available_places": places})
            PlatformQualification.objects.filter(pk=setup.pk).update(places=places)
        if setup.status == Publication.DRAFT:
            path = f"/studies/{setup.quiz_external_id}/transition/"
            self._request("publish quiz study", "POST", path, repeatable=True, json={"action": "PUBLISH"})
            PlatformQualification.objects.filter(pk=setup.pk).update(status=Publication.ACTIVE)
            setup.status = Publication.ACTIVE
        return setup

    def _create_group(self, campaign: Campaign) -> str:
        """A participant group in the project's workspace. A lost answer may leave an empty group
        behind (harmless); the id is recorded as soon as Prolific answers.
        https://docs.prolific.com/api-reference/participant-groups/create-participant-group"""
        body = {
            "name": f"Quiz passed: campaign {campaign.pk} ({campaign.name})"[:120],
            "workspace_id": self._workspace_id(),
            "description": "Participants who passed this campaign's qualification quiz (added by our sync).",
        }
        group = self._request("create participant group", "POST", "/participant-groups/", repeatable=False, json=body)
        return group["id"]

    def _quiz_study(self, campaign: Campaign, url: str, completion_code: str, places: int) -> dict:
        """The quiz as a study of its own: one place per seat of the qualification HITs, the quiz's
        reward and minutes, and no participant-group filter."""
        minutes = campaign.qualification_minutes
        return {
            **self._study(campaign, url, completion_code, places),
            "name": f"Qualification quiz: {campaign.name}"[:120],
            "internal_name": f"campaign {campaign.pk} qualification",
            "description": (
                "A short quiz of film dialogues with known answers, each answer checked as you go. "
                "Participants who pass are invited to the paid labeling study."
            ),
            "estimated_completion_time": max(1, min(campaign.time_limit_minutes, minutes)),
            "reward": minor_units(campaign.qualification_reward),
        }

    def grant_qualifications(self, publication: Publication, results: list[QualificationResult]) -> None:
        """Add the passing participants to the group the paid study allowlists; members already
        in it are ignored by Prolific, so a repeat is harmless.
        https://docs.prolific.com/api-reference/participant-groups/add-to-participant-group"""
        setup = PlatformQualification.objects.get(campaign_id=publication.campaign_id, platform=self.name)
        ids = sorted({result.worker.external_id for result in results})
        path = f"/participant-groups/{setup.external_id}/participants/"
        self._request("add to participant group", "POST", path, repeatable=True, json={"participant_ids": ids})

    def _set_places(self, publication: Publication, places: int) -> None:
        # an absolute number: setting it twice is harmless
        self._request(
            "set places",
            "PATCH",
            f"/studies/{publication.external_id}/",
            repeatable=True,
            json={"total_available_places": places},
        )
        Publication.objects.filter(pk=publication.pk, places__lt=places).update(places=places)
        publication.places = max(publication.places, places)

    def worker_preview_url(self, publication: Publication) -> str:
        return f"https://app.prolific.com/researcher/workspaces/studies/{publication.external_id}"

    # --- sync --------------------------------------------------------------------------------------

    def fetch_results(self, publication: Publication) -> list[ExternalResult]:
        """The paid study's submissions and, when the campaign has one, the quiz study's."""
        results = self._submissions(publication.external_id)
        quiz = _quiz_study_id(publication)
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

    def pay_bonuses(self, publication: Publication, entries: list[PaymentEntry]) -> int:
        """Set up one bulk bonus for the due entries, record its id on them, claim its one pay call
        in the ledger, pay, record the payment. Entries already tied to an unpaid, unstarted
        object (an interrupted earlier run) are paid through that object."""
        from labeling.payments import attach_platform_reference

        paid = 0
        for reference in sorted({e.platform_reference for e in entries if e.platform_reference}):
            paid += self._pay(reference)
        fresh = [e for e in entries if not e.platform_reference]
        if not fresh:
            return paid
        by_participant: dict[str, Decimal] = {}
        for entry in fresh:
            participant = entry.assignment.platform_submission.worker_external_id
            by_participant[participant] = by_participant.get(participant, Decimal(0)) + entry.amount
        csv = "\n".join(f"{participant},{amount:.2f}" for participant, amount in sorted(by_participant.items()))
        created = self._request(
            "set up bonuses",
            "POST",
            "/submissions/bonus-payments/",
            repeatable=False,  # a lost answer leaves an unpaid object behind: harmless
            json={"study_id": publication.external_id, "csv_bonuses": csv},
        )
        tied = attach_platform_reference([e.pk for e in fresh], created["id"])
        if len(tied) != len(fresh):
            raise PlatformError(f"bulk bonus {created['id']}: another run paid some of these entries; left unpaid")
        return paid + self._pay(created["id"])

    def _pay(self, reference: str) -> int:
        from labeling.payments import abandon_reference, mark_entries_paid, start_pay

        if not start_pay(reference):
            return 0  # another run sends (or sent) this pay call
        try:
            self._request("pay bonuses", "POST", f"/bulk-bonus-payments/{reference}/pay/", repeatable=False)
        except calls.PlatformCallError as error:
            if error.code.isdigit() and 400 <= int(error.code) < 500 and error.code != "429":
                abandon_reference(reference)  # refused outright: nothing was paid
            raise  # anything else: the entries stay "pay started" for a researcher to check
        return mark_entries_paid(reference=reference)

    def add_places(self, publication: Publication, hit: HIT, places: int) -> None:
        seats = _seats(publication.campaign, extra={hit.pk: places})
        self._set_places(publication, seats)

    def resume_after_rejection(self, publication: Publication) -> bool:
        """Prolific pauses a full study when one of its submissions is rejected; the freed place is
        offered again only once the study is started. Started (START) while places remain.
        https://docs.prolific.com/api-reference/studies (get a study: status, places_taken,
        total_available_places; transition a study: action START)"""
        path = f"/studies/{publication.external_id}/"
        study = self._request("get study", "GET", path, repeatable=True)
        if study.get("status") != STUDY_PAUSED:
            return False
        if int(study.get("places_taken") or 0) >= int(study.get("total_available_places") or 0):
            return False
        self._request("start study", "POST", f"{path}transition/", repeatable=True, json={"action": "START"})
        return True

    def request_return(self, publication: Publication, result: ExternalResult, reason: str) -> None:
        """Documented for completed submissions (AWAITING REVIEW): sync sends it only for those.
        https://docs.prolific.com/api-reference/submissions (request a return)
        https://participant-help.prolific.com/en/articles/445041-how-to-return-a-submission-on-prolific"""
        path = f"/submissions/{result.assignment_id}/request-return/"
        self._request("request return", "POST", path, repeatable=True, json={"request_return_reasons": [reason]})

    def close(self, publication: Publication) -> None:
        for study in filter(None, [publication.external_id, _quiz_study_id(publication)]):
            path = f"/studies/{study}/transition/"
            self._request("stop study", "POST", path, repeatable=True, json={"action": "STOP"})


def _seats(campaign: Campaign, extra: dict[int, int] | None = None) -> int:
    """Places the campaign needs: its paid HITs' required workers (`extra` overrides some HITs');
    the qualification quiz is a study of its own."""
    rows = campaign.hits.exclude(kind=HIT.QUALIFICATION).values_list("pk", "required_workers")
    return sum((extra or {}).get(pk, workers) for pk, workers in rows)


def _quiz_seats(campaign: Campaign) -> int:
    rows = campaign.hits.filter(kind=HIT.QUALIFICATION).values_list("required_workers", flat=True)
    return sum(rows)


def _quiz_study_id(publication: Publication) -> str:
    setup = PlatformQualification.objects.filter(campaign_id=publication.campaign_id, platform=ProlificPlatform.name)
    return setup.values_list("quiz_external_id", flat=True).first() or ""


# --- checking a landing (wt-identity: the landing's own lookup, kept apart from sync) -----------

# a landing waits at most this long for Prolific (connect, read): one try, no retry (the page asks
# again), so a slow Prolific holds a web worker for seconds at most, never for a retry's backoff
LANDING_TIMEOUT_SECONDS = (1.5, 2.5)


def landing_submission(platform: ProlificPlatform, session_id: str) -> dict | None:
    """Prolific's submission `session_id` (the SESSION_ID a landing brings), or None when Prolific
    knows no such submission (404). Any other failure (not configured, a timeout, 429, 5xx) raises
    PlatformError: the landing is then not proven, and fails closed.

    "Retrieve a submission", GET /api/v1/submissions/{id}/ (id: "the ID we pass to the survey
    platform using %SESSION_ID%"), answers the submission's `study_id`, `participant` and
    `status` (https://docs.prolific.com/api-reference/submissions/get-submission; the statuses:
    https://docs.prolific.com/api-reference/submissions/submission-object)."""
    from requests import exceptions as http

    try:
        response = platform.session.get(f"{API}/submissions/{session_id}/", timeout=LANDING_TIMEOUT_SECONDS)
    except (http.ConnectionError, http.Timeout) as error:
        raise PlatformError(f"prolific get submission: {type(error).__name__}") from error
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise PlatformError(f"prolific get submission: HTTP {response.status_code}")
    return response.json()
