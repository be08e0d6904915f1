"""The life of a campaign's Prolific studies: the quiz study and its participant group drafted,
each study published once (its state read first), kept recruiting while the campaign is open
(Prolific pauses a full study by itself on a rejection or a return; the researcher's own pause is
the campaign's), and stopped from whatever state it is in. A mixin of
labeling.platforms.prolific.ProlificPlatform: every call goes through its `_request`.

Study states and the actions each allows:
https://docs.prolific.com/api-reference/studies/the-study-object (UNPUBLISHED, PUBLISHING, ACTIVE,
PAUSED, AWAITING REVIEW, COMPLETED) and https://docs.prolific.com/api-reference/studies/transition-study
(PUBLISH a draft; PAUSE an active study; START a paused one; STOP an active or paused one);
automatic pausing and stopping being final:
https://researcher-help.prolific.com/hc/en-gb/articles/360010963354-Pausing-stopping-a-study
"""

import contextlib
import math
import secrets
from decimal import ROUND_HALF_UP, Decimal

from labeling.models import HIT, Campaign, PlatformQualification, Publication, QualificationResult
from labeling.platforms import calls, qualification
from labeling.platforms.base import PlatformError

UNPUBLISHED, PAUSED, ACTIVE = "UNPUBLISHED", "PAUSED", "ACTIVE"
STOPPABLE = ("ACTIVE", "PAUSED")


def minimum_allowed_minutes(estimated: int) -> int:
    """The least `maximum_allowed_time` Prolific accepts for a study of `estimated` minutes:
    2 + 2*estimated + 2*sqrt(estimated), rounded up (create a study,
    https://docs.prolific.com/api-reference/studies/create-study; the help centre's form
    2 + X + 2*sqrt(X), https://researcher-help.prolific.co/hc/en-gb/articles/360009094694, is lower,
    so meeting this one meets both)."""
    return math.ceil(2 + 2 * estimated + 2 * math.sqrt(estimated))


def time_limit_refusals(campaign: Campaign) -> list[str]:
    """The campaign's time limit is sent as each study's maximum_allowed_time: below Prolific's
    minimum for a study's estimate it would be refused, so it is refused before anything is made."""
    estimates = [("the paid study", paid_estimate(campaign))]
    if campaign.qualification_required:
        estimates.append(("the quiz study", quiz_estimate(campaign)))
    return [
        f"{what}: the time limit of {campaign.time_limit_minutes} min is below Prolific's minimum maximum time of "
        f"{minimum_allowed_minutes(estimated)} min for {estimated} estimated minutes (2 + 2 x estimated + "
        "2 x sqrt(estimated)); raise the campaign's time limit"
        for what, estimated in estimates
        if campaign.time_limit_minutes < minimum_allowed_minutes(estimated)
    ]


def paid_estimate(campaign: Campaign) -> int:
    return max(1, min(campaign.time_limit_minutes, campaign.estimated_minutes))


def quiz_estimate(campaign: Campaign) -> int:
    return max(1, min(campaign.time_limit_minutes, campaign.qualification_minutes))


def minor_units(amount: Decimal) -> int:
    """Prolific's rewards are in pence or cents."""
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def refused_outright(error: calls.PlatformCallError) -> bool:
    """A 4xx other than 429: Prolific refused and did nothing."""
    return error.code.isdigit() and 400 <= int(error.code) < 500 and error.code != "429"


def paid_places(campaign: Campaign, extra: dict[int, int] | None = None) -> int:
    """Places the paid study needs: its HITs' required workers (`extra` overrides some HITs')."""
    rows = campaign.hits.exclude(kind=HIT.QUALIFICATION).values_list("pk", "required_workers")
    return sum((extra or {}).get(pk, workers) for pk, workers in rows)


def quiz_places(campaign: Campaign) -> int:
    return sum(campaign.hits.filter(kind=HIT.QUALIFICATION).values_list("required_workers", flat=True))


def quiz_study_id(campaign_id: int) -> str:
    setup = PlatformQualification.objects.filter(campaign_id=campaign_id, platform="prolific")
    return setup.values_list("quiz_external_id", flat=True).first() or ""


class ProlificStudies:
    """Study calls of ProlificPlatform (it supplies `_request`, `_study`, `_workspace_id`, `name`)."""

    # --- the quiz study and its participant group ---------------------------------------------------

    def _quiz_draft(self, campaign: Campaign, url: str) -> PlatformQualification:
        """The participant group of the quiz's passers (which the paid study allowlists) and the quiz
        study (without that filter), each created once and recorded at once; not published here."""
        setup = qualification.platform_setup(campaign, self.name)
        if not setup.external_id:
            setup.external_id = self._create_group(campaign)
            PlatformQualification.objects.filter(pk=setup.pk).update(external_id=setup.external_id)
        if not setup.completion_code:
            setup.completion_code = secrets.token_hex(4).upper()
            PlatformQualification.objects.filter(pk=setup.pk).update(completion_code=setup.completion_code)
        if not setup.quiz_external_id:
            places = quiz_places(campaign)
            body = self._quiz_study(campaign, url, setup.completion_code, places)
            study = self._create_study(body, "create quiz study")
            setup.quiz_external_id, setup.places = study["id"], places
            PlatformQualification.objects.filter(pk=setup.pk).update(quiz_external_id=study["id"], places=places)
        elif quiz_places(campaign) > setup.places:  # seats opened since: more places (an absolute number)
            places = quiz_places(campaign)
            path = f"/studies/{setup.quiz_external_id}/"
            self._request("set quiz places", "PATCH", path, repeatable=True, json={"total_available_places": places})
            PlatformQualification.objects.filter(pk=setup.pk).update(places=places)
        return setup

    def _publish_quiz(self, setup: PlatformQualification) -> None:
        if setup.status == Publication.DRAFT:
            self._publish_study(setup.quiz_external_id, "publish quiz study")
            PlatformQualification.objects.filter(pk=setup.pk).update(status=Publication.ACTIVE)
            setup.status = Publication.ACTIVE

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
        return {
            **self._study(campaign, url, completion_code, places),
            "name": f"Qualification quiz: {campaign.name}"[:120],
            "internal_name": f"campaign {campaign.pk} qualification",
            "description": (
                "A short quiz of film dialogues with known answers, each answer checked as you go. "
                "Participants who pass are invited to the paid labeling study."
            ),
            "estimated_completion_time": quiz_estimate(campaign),
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

    def _create_study(self, body: dict, operation: str) -> dict:
        """Create a draft study. Creating is not idempotent: after a failure that may have created
        it (a lost answer, a 5xx), our draft is looked for among the project's studies and taken
        instead of making a second one (`_draft_like`)."""
        try:
            return self._request(operation, "POST", "/studies/", repeatable=False, json=body)
        except calls.PlatformCallError as error:
            found = None if refused_outright(error) else self._draft_like(body)
            if found is None:
                raise
            return found

    def _draft_like(self, body: dict) -> dict | None:
        """Our draft among the project's studies. The listing's rows are StudyShort objects (id, name,
        internal_name, status, study_type ...: no external_study_url,
        https://docs.prolific.com/api-reference/studies/get-project-studies), so drafts are picked
        by internal name (it tells the quiz study from the paid one) and each is retrieved in full
        (https://docs.prolific.com/api-reference/studies/get-study) to compare its URL, which holds
        the campaign's secret entry token. The first that matches is ours; any other matching draft
        (a second lost answer) is deleted, so no orphan draft is left."""
        ours = []
        for row in self._listed_studies(body["project"]):
            if (row.get("internal_name"), row.get("status")) != (body["internal_name"], UNPUBLISHED):
                continue
            study = self._request("get study", "GET", f"/studies/{row['id']}/", repeatable=True)
            if study.get("external_study_url") == body["external_study_url"]:
                ours.append(study)
        for extra in ours[1:]:
            with contextlib.suppress(PlatformError):
                self._request("delete draft study", "DELETE", f"/studies/{extra['id']}/", repeatable=True)
        return ours[0] if ours else None

    def _listed_studies(self, project: str):
        path = f"/projects/{project}/studies/"
        while path:
            page = self._request("list project studies", "GET", path, repeatable=True)
            yield from page.get("results", [])
            following = ((page.get("_links") or {}).get("next") or {}).get("href")
            path = following.split("/api/v1", 1)[-1] if following else ""

    # --- one study's state ------------------------------------------------------------------------

    def _study_state(self, study_id: str) -> str:
        return self._request("get study", "GET", f"/studies/{study_id}/", repeatable=True).get("status", "")

    def _publish_study(self, study_id: str, operation: str) -> None:
        """PUBLISH, documented only from UNPUBLISHED: the state is read first, so a try whose answer
        was lost (the study already PUBLISHING or ACTIVE) is not refused but taken as done."""
        if self._study_state(study_id) != UNPUBLISHED:
            return
        self._transition_study(study_id, "PUBLISH", operation, done_unless=(UNPUBLISHED,))

    def _transition_study(self, study_id: str, action: str, operation: str, *, done_unless: tuple[str, ...]) -> None:
        """One study transition; after a failure the state is read again, and a study no longer in
        `done_unless` counts as moved (the lost answer of a transition that happened)."""
        path = f"/studies/{study_id}/transition/"
        try:
            self._request(operation, "POST", path, repeatable=False, json={"action": action})
        except calls.PlatformCallError:
            if self._study_state(study_id) in done_unless:
                raise

    def _undo_drafts(self, campaign: Campaign, publication: Publication) -> None:
        """Publishing was refused before any study was published: delete the drafts made and forget
        them, so nothing of a half publication is left to publish later. Best effort: a draft that
        cannot be deleted is harmless (a draft recruits no one).
        https://docs.prolific.com/api-reference/studies/delete-study"""
        setup = PlatformQualification.objects.filter(campaign=campaign, platform=self.name).first()
        drafts = [
            publication.external_id,
            setup.quiz_external_id if setup and setup.status == Publication.DRAFT else "",
        ]
        for study in filter(None, drafts):
            with contextlib.suppress(PlatformError):
                self._request("delete draft study", "DELETE", f"/studies/{study}/", repeatable=True)
        Publication.objects.filter(pk=publication.pk).update(external_id="", places=0)
        publication.external_id, publication.places = "", 0
        if setup is not None and setup.status == Publication.DRAFT:
            PlatformQualification.objects.filter(pk=setup.pk).update(quiz_external_id="", places=0)

    def _set_places(self, publication: Publication, places: int) -> None:
        """An absolute number: setting it twice is harmless. Never for a stopped publication: more
        places reopen a completed study ("A completed study will become active again and resume
        recruiting", https://docs.prolific.com/api-reference/studies/update-study)."""
        if Publication.objects.filter(pk=publication.pk, status=Publication.CLOSED).exists():
            raise PlatformError(f"study {publication.external_id} was stopped; its places are not changed")
        self._request(
            "set places",
            "PATCH",
            f"/studies/{publication.external_id}/",
            repeatable=True,
            json={"total_available_places": places},
        )
        Publication.objects.filter(pk=publication.pk, places__lt=places).update(places=places)
        publication.places = max(publication.places, places)

    # --- while the campaign runs, and at its end ----------------------------------------------------

    def campaign_studies(self, publication: Publication) -> list[str]:
        return list(filter(None, [publication.external_id, quiz_study_id(publication.campaign_id)]))

    def keep_recruiting(self, publication: Publication) -> int:
        """Carry the researcher's intent (the campaign's status, the one record of their pause) to
        every study of the campaign: while it is open, a study Prolific paused by itself (after a
        rejection or a return freed a place of a full study) is started again, the quiz study too,
        else no one qualifies and the paid study stops recruiting; while it is paused, each active
        study is paused. Returns how many studies were moved; one that fails does not stop the other."""
        campaign = Campaign.objects.only("status").get(pk=publication.campaign_id)
        if publication.status == Publication.CLOSED or campaign.status not in (Campaign.OPEN, Campaign.PAUSED):
            return 0
        wanted, action = (PAUSED, "START") if campaign.status == Campaign.OPEN else (ACTIVE, "PAUSE")
        moved, errors = 0, []
        for study in self.campaign_studies(publication):
            try:
                if self._study_state(study) == wanted:
                    self._transition_study(study, action, f"{action.lower()} study", done_unless=(wanted,))
                    moved += 1
            except PlatformError as error:
                errors.append(f"study {study}: {error}")
        if errors:
            raise PlatformError("; ".join(errors))
        return moved

    def close(self, publication: Publication) -> None:
        """Stop every study of the campaign from whatever state it is in: ACTIVE or PAUSED is
        stopped (STOP, final); PUBLISHING is read again until it can be; a draft, AWAITING REVIEW
        or COMPLETED study recruits no one and is left as it is (STOP is not documented for them).
        Each study is tried; the errors are raised together after the last."""
        errors = []
        for study in self.campaign_studies(publication):
            try:
                self._stop(study)
            except PlatformError as error:
                errors.append(f"study {study}: {error}")
        if errors:
            raise PlatformError("; ".join(errors))

    def _stop(self, study_id: str) -> None:
        state = self._study_state(study_id)
        if state == "PUBLISHING":
            state = self._study_state(study_id)
        if state == "PUBLISHING":
            raise PlatformError(f"study {study_id} is still publishing; close again to stop it")
        if state in STOPPABLE:
            self._transition_study(study_id, "STOP", "stop study", done_unless=STOPPABLE)
