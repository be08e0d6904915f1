"""The crowd workflow's tables: workers (people), campaigns and the quiz pool (campaign), HITs,
assignments, answers and their aggregate (work), payments and platforms (payments), the
qualification step (qualification). Django finds every model through this package."""

from labeling.models.campaign import (
    CURRENCY_CHOICES,
    LAST_TURN_LABEL,
    REDUNDANCY_CHOICES,
    Campaign,
    QuizQuestion,
    QuizQuestionQuerySet,
    new_entry_token,
)
from labeling.models.events import PlatformEvent, PlatformHook
from labeling.models.figures import CampaignFigures
from labeling.models.payments import PaymentEntry, PlatformSubmission, Publication
from labeling.models.people import ProlificSessionCheck, Worker
from labeling.models.qualification import PlatformQualification, QualificationResult, QuizCheck
from labeling.models.raters import RaterAnswer
from labeling.models.study import ConsentDecision, PracticeAnswer, StudyStep, SurveyResponse
from labeling.models.work import (
    HIT,
    AggregatedLabel,
    Assignment,
    AssignmentQuerySet,
    HITItem,
    Response,
    counted_assignment_q,
    seat_items_q,
)

__all__ = [
    "PlatformEvent",
    "PlatformHook",
    "ConsentDecision",
    "PracticeAnswer",
    "StudyStep",
    "SurveyResponse",
    "CampaignFigures",
    "RaterAnswer",
    "Worker",
    "ProlificSessionCheck",
    "new_entry_token",
    "LAST_TURN_LABEL",
    "REDUNDANCY_CHOICES",
    "CURRENCY_CHOICES",
    "Campaign",
    "QuizQuestionQuerySet",
    "QuizQuestion",
    "HIT",
    "HITItem",
    "seat_items_q",
    "counted_assignment_q",
    "AssignmentQuerySet",
    "Assignment",
    "Response",
    "AggregatedLabel",
    "PaymentEntry",
    "Publication",
    "PlatformSubmission",
    "QualificationResult",
    "QuizCheck",
    "PlatformQualification",
]
