"""The MTurk side of a campaign's qualification step (labeling.services.qualification): the HIT types'
qualification requirements, our qualification type (created once per campaign, which the paid
HIT type requires), the quiz HIT's own HIT type (requiring its absence), and granting it to the
workers who passed. A mixin of labeling.platforms.mturk.MTurkPlatform: every call goes through
its `_call` (calls.call, retries)."""

import re

from django.conf import settings

from labeling.models import Campaign, PlatformQualification, Publication, QualificationResult
from labeling.platforms import calls, qualification
from labeling.platforms.base import PlatformError

# MTurk's system qualification types
LOCALE_QUALIFICATION = "00000000000000000071"
APPROVAL_RATE_QUALIFICATION = "000000000000000000L0"
# MTurk's answer to a CreateQualificationType whose name we used before (an earlier try's answer lost)
NAME_TAKEN = re.compile(r"already created a QualificationType|name must be unique", re.IGNORECASE)


def qualification_requirements(quiz_qualification: str = "", *, passed: bool = True) -> list[dict]:
    """Worker locale (the paper's US, GB, CA, AU, NZ by default), approval rate, and, when
    MTURK_BLOCK_QUALIFICATION_ID is set, the absence of our "blocked" qualification.

    quiz_qualification: a campaign's qualification type (labeling.services.qualification): its paid HIT type
    requires it (`passed`: Comparator Exists), its quiz HIT type requires its absence (DoesNotExist,
    so a qualified worker is not offered the quiz again). Hidden from workers who do not meet it
    (DiscoverPreviewAndAccept). QualificationRequirement:
    https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_QualificationRequirementDataStructureArticle.html"""
    guarded = "DiscoverPreviewAndAccept"
    requirements = [
        {
            "QualificationTypeId": LOCALE_QUALIFICATION,
            "Comparator": "In",
            "LocaleValues": [{"Country": country} for country in settings.MTURK_LOCALES],
            "ActionsGuarded": guarded,
        },
        {
            "QualificationTypeId": APPROVAL_RATE_QUALIFICATION,
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [settings.MTURK_MIN_APPROVAL_RATE],
            "ActionsGuarded": guarded,
        },
    ]
    if settings.MTURK_BLOCK_QUALIFICATION_ID:
        requirements.append(
            {
                "QualificationTypeId": settings.MTURK_BLOCK_QUALIFICATION_ID,
                "Comparator": "DoesNotExist",
                "ActionsGuarded": guarded,
            }
        )
    if quiz_qualification:
        requirements.append(
            {
                "QualificationTypeId": quiz_qualification,
                "Comparator": "Exists" if passed else "DoesNotExist",
                "ActionsGuarded": guarded,
            }
        )
    return requirements


class MTurkQualifications:
    """The qualification calls of MTurkPlatform (it supplies `_call`, `_hit_type` and `name`)."""

    def _qualification(self, campaign: Campaign) -> PlatformQualification:
        """The campaign's qualification type (which the paid HIT type requires and sync grants) and
        the quiz HIT's own HIT type (without it), each created once and recorded at once."""
        setup = qualification.platform_setup(campaign, self.name)
        if not setup.external_id:
            setup.external_id = self._create_qualification_type(campaign)
            PlatformQualification.objects.filter(pk=setup.pk).update(external_id=setup.external_id)
        if not setup.quiz_external_id:
            # CreateHITType answers an existing HIT type's id for the same values: safe to repeat
            answer = self._call("create_hit_type", **self._quiz_hit_type(campaign, setup.external_id))
            setup.quiz_external_id = answer["HITTypeId"]
            PlatformQualification.objects.filter(pk=setup.pk).update(quiz_external_id=setup.quiz_external_id)
        return setup

    def _create_qualification_type(self, campaign: Campaign) -> str:
        """CreateQualificationType; its name is unique per requester (the campaign's id and creation
        time in it), so a repeat after a lost answer is refused by name and the type is looked up.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_CreateQualificationTypeOperation.html"""
        params = {
            "Name": f"Dialogue emotion quiz passed: campaign {campaign.pk}.{campaign.created_at:%Y%m%d%H%M%S}",
            "Keywords": settings.MTURK_KEYWORDS,
            "Description": (
                f"Passed the qualification quiz of the dialogue labeling campaign “{campaign.name}”; "
                "it opens the campaign's paid HITs."
            )[:2000],
            "QualificationTypeStatus": "Active",
        }
        try:
            return self._call("create_qualification_type", **params)["QualificationType"]["QualificationTypeId"]
        except calls.PlatformCallError as error:
            if not NAME_TAKEN.search(error.detail):
                raise
            return self._find_qualification_type(params["Name"])

    def _find_qualification_type(self, name: str) -> str:
        """Our qualification type of this exact name.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_ListQualificationTypesOperation.html"""
        token = None
        while True:
            page = self._call(
                "list_qualification_types",
                Query=name,
                MustBeRequestable=False,
                MustBeOwnedByCaller=True,
                MaxResults=100,
                **({"NextToken": token} if token else {}),
            )
            for found in page.get("QualificationTypes", []):
                if found.get("Name") == name:
                    return found["QualificationTypeId"]
            token = page.get("NextToken")
            if not token:
                raise PlatformError(f"MTurk refused the qualification type name {name!r} but lists no type of it")

    def _quiz_hit_type(self, campaign: Campaign, quiz_qualification: str) -> dict:
        """The paid HIT type's settings (time limit, auto-approval) with the quiz's reward, words
        and requirement: the qualification's absence."""
        return {
            **self._hit_type(campaign),
            "Title": f"Qualification quiz: label the emotion of short movie dialogues ({campaign.name})"[:128],
            "Description": (
                "A short quiz of dialogues with known answers, each answer checked as you go; "
                "workers who pass are offered the paid dialogue labeling HITs."
            ),
            "Reward": f"{campaign.qualification_reward:.2f}",
            "QualificationRequirements": qualification_requirements(quiz_qualification, passed=False),
        }

    def grant_qualifications(self, publication: Publication, results: list[QualificationResult]) -> None:
        """Give each passing worker the campaign's qualification (its value: the quiz score), with
        MTurk's notification, so the paid HITs show for them. Associating again only sets the value.
        https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_AssociateQualificationWithWorkerOperation.html"""
        setup = PlatformQualification.objects.get(campaign_id=publication.campaign_id, platform=self.name)
        for result in results:
            self._call(
                "associate_qualification_with_worker",
                QualificationTypeId=setup.external_id,
                WorkerId=result.worker.external_id,
                IntegerValue=result.correct,
                SendNotification=True,
            )
