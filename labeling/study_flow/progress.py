"""The one writer of a participant's way through a study flow (labeling.models.study): the steps
reached, the consent decision (with the audit log), the practice answers and the exit survey.
Pages, the platform landings, the simulated crowd and the demo call these; each is idempotent, so
a double click, a reload or two tabs record a step, a decision or an answer once (the first one
stands, held by a unique constraint, never by a read before the write).

`cleared` is what the claim asks before it takes a seat: one indexed read of the participant's
steps in the campaign, and none for a campaign without steps before the work.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction

from annotation.record import audit
from labeling.models import Campaign, ConsentDecision, PracticeAnswer, StudyStep, SurveyResponse, Worker
from labeling.study_flow import config


def reached(worker_id: int, campaign_id: int) -> dict[str, datetime]:
    """The steps the participant reached in the campaign, with when (one read, by the unique index)."""
    rows = StudyStep.objects.filter(worker_id=worker_id, campaign_id=campaign_id).values_list("step", "reached_at")
    return dict(rows)


def record(worker_id: int, campaign_id: int, *steps: str) -> None:
    """Record that the participant reached `steps` (each once: a step reached again is ignored)."""
    for step in steps:
        if step not in config.RECORDED_STEPS:
            raise ValueError(f"unknown study step {step!r}")
    rows = [StudyStep(worker_id=worker_id, campaign_id=campaign_id, step=step) for step in steps]
    StudyStep.objects.bulk_create(rows, ignore_conflicts=True)


def next_step(worker: Worker, campaign: Campaign) -> str | None:
    """Where the participant goes before the work (config.next_step); None: the work is open."""
    flow = campaign.study_flow or {}
    if not config.steps_before_work(flow):
        return None
    return config.next_step(flow, set(reached(worker.pk, campaign.pk)))


def cleared(worker: Worker, campaign: Campaign) -> bool:
    """Whether the campaign's work is open to the participant: every step before it done."""
    return next_step(worker, campaign) is None


def cleared_all(worker: Worker, campaigns: list[Campaign]) -> bool:
    """cleared() for each of the campaigns, in one read."""
    reached_by: dict[int, set[str]] = {campaign.pk: set() for campaign in campaigns}
    rows = StudyStep.objects.filter(worker_id=worker.pk, campaign_id__in=list(reached_by))
    for campaign_id, step in rows.values_list("campaign_id", "step"):
        reached_by[campaign_id].add(step)
    return all(config.next_step(c.study_flow or {}, reached_by[c.pk]) is None for c in campaigns)


# --- consent ------------------------------------------------------------------------------------


def decide_consent(worker: Worker, campaign: Campaign, consented: bool) -> ConsentDecision:
    """Record the participant's answer to the campaign's consent as it stands now (its version),
    with an audit entry, in one transaction. The first answer to a version stands: a second
    (a double click, the other button in another tab) returns the first, recording nothing."""
    consent = (campaign.study_flow or {}).get("consent")
    if not consent:
        raise ValueError("this campaign asks for no consent")
    try:
        with transaction.atomic():
            decision = ConsentDecision.objects.create(
                worker=worker, campaign=campaign, version=consent["version"], consented=consented
            )
            kind = audit.CONSENT_GIVEN if consented else audit.CONSENT_DECLINED
            audit.record(
                kind,
                None,
                decision,
                None,
                {"version": decision.version, "consented": consented, "at": decision.decided_at.isoformat()},
                campaign_id=campaign.pk,
                worker_id=worker.pk,
            )
            record(worker.pk, campaign.pk, config.CONSENTED if consented else config.DECLINED)
    except IntegrityError:
        return ConsentDecision.objects.get(worker=worker, campaign=campaign, version=consent["version"])
    return decision


# --- practice -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PracticeState:
    attempt: int  # the attempt now (from 1): the last one answered in, or 1
    answers: dict[int, tuple[str, bool]]  # item index -> (answer, correct), in that attempt
    result: config.AttemptResult | None  # once every item of the attempt is answered
    total: int  # practice items

    @property
    def next_item(self) -> int | None:
        """The first item of the attempt not answered yet (None: the attempt is complete)."""
        return None if self.result else min(set(range(self.total)) - set(self.answers), default=None)


def practice_state(worker: Worker, campaign: Campaign) -> PracticeState:
    practice = campaign.study_flow["practice"]
    rows = list(
        PracticeAnswer.objects.filter(worker=worker, campaign=campaign).values_list(
            "attempt", "item", "answer", "correct"
        )
    )
    attempt = max((row[0] for row in rows), default=1)
    answers = {item: (answer, correct) for at, item, answer, correct in rows if at == attempt}
    total = len(practice["items"])
    result = None
    if len(answers) == total:
        result = config.attempt_result(practice, {i: a for i, (a, _) in answers.items()}, attempt)
    return PracticeState(attempt, answers, result, total)


class PracticeClosed(Exception):
    """No practice answer is taken now: passed already, or no attempt left."""


def answer_practice(worker: Worker, campaign: Campaign, item: int, answer: str) -> PracticeState:
    """Record one practice answer, in the attempt now or, after a failed attempt with a retry left,
    in the next; a second answer to the same screen of an attempt is ignored (the first stands).
    Once an attempt is complete its outcome is recorded: passed, or failed when no retry is left."""
    practice = campaign.study_flow["practice"]
    if not 0 <= item < len(practice["items"]):
        raise ValueError(f"item: no practice item {item}")
    state = practice_state(worker, campaign)
    attempt = state.attempt
    if state.result is not None:
        if state.result.passed or state.result.retries_left == 0:
            raise PracticeClosed()
        attempt += 1
    correct = answer == practice["items"][item]["answer"]
    PracticeAnswer.objects.bulk_create(
        [
            PracticeAnswer(
                worker=worker, campaign=campaign, attempt=attempt, item=item, answer=answer[:64], correct=correct
            )
        ],
        ignore_conflicts=True,
    )
    state = practice_state(worker, campaign)
    if state.result is not None:
        record(worker.pk, campaign.pk, _outcome(state.result))
    return state


def _outcome(result: config.AttemptResult) -> str:
    if result.passed:
        return config.PRACTICE_PASSED
    return config.PRACTICE_FAILED if result.retries_left == 0 else config.PRACTICE


def practice_accuracy(campaign: Campaign) -> dict[int, dict]:
    """Per participant: practice answers right of those given (every attempt), and attempts."""
    figures: dict[int, dict] = {}
    rows = PracticeAnswer.objects.filter(campaign=campaign).values_list("worker_id", "attempt", "correct")
    for worker_id, attempt, correct in rows:
        one = figures.setdefault(worker_id, {"answers": 0, "right": 0, "attempts": 0})
        one["answers"] += 1
        one["right"] += int(correct)
        one["attempts"] = max(one["attempts"], attempt)
    for one in figures.values():
        one["accuracy"] = round(one["right"] / one["answers"], 4)
    return figures


# --- the exit survey ----------------------------------------------------------------------------


def survey_due(worker_id: int, campaign: Campaign) -> bool:
    """Whether the campaign's exit survey is still to be offered to the participant."""
    if not (campaign.study_flow or {}).get("survey"):
        return False
    return not SurveyResponse.objects.filter(worker_id=worker_id, campaign=campaign).exists()


def save_survey(
    worker: Worker, campaign: Campaign, answers: dict, *, skipped: bool = False, language: str = ""
) -> bool:
    """Store the participant's exit survey (checked answers: config.clean_survey_answers), or that
    they skipped it; the first one stands. True when this call stored it."""
    try:
        with transaction.atomic():
            SurveyResponse.objects.create(
                worker=worker, campaign=campaign, answers={} if skipped else answers, skipped=skipped, language=language
            )
            record(worker.pk, campaign.pk, config.SURVEY_SKIPPED if skipped else config.SURVEY_ANSWERED)
    except IntegrityError:
        return False
    return True


# --- a simulated participant --------------------------------------------------------------------


def walk_as_simulated(worker: Worker, campaign: Campaign) -> None:
    """Take a simulated participant (the demo's crowd) through the steps before the work by the
    same writers a person's pages call: arrival, consent given, instructions read, every practice
    item answered right. A campaign without those steps records nothing."""
    flow = campaign.study_flow or {}
    if not config.steps_before_work(flow) or cleared(worker, campaign):
        return
    record(worker.pk, campaign.pk, config.ARRIVED)
    if flow.get("consent"):
        record(worker.pk, campaign.pk, config.CONSENT)
        decide_consent(worker, campaign, True)
    if flow.get("instructions"):
        record(worker.pk, campaign.pk, config.INSTRUCTIONS, config.INSTRUCTIONS_READ)
    if flow.get("practice") and config.PRACTICE_PASSED not in reached(worker.pk, campaign.pk):
        record(worker.pk, campaign.pk, config.PRACTICE)
        for index, item in enumerate(flow["practice"]["items"]):
            answer_practice(worker, campaign, index, item["answer"])
