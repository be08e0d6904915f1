"""The study flow's figures for the study report (labeling.study_report) and the exports: the
funnel (how many arrived, consented, declined, passed or failed practice, started work,
submitted, answered the survey; the median time per step), the exit survey summarised, its
answers one row per participant, and practice accuracy beside quiz accuracy per worker."""

from collections import defaultdict

from labeling.models import Campaign, StudyStep, SurveyResponse, Worker
from labeling.study_flow import config, progress


def study_flow_figures(campaign: Campaign, quiz_answers: list | None = None) -> dict:
    """What the report shows of the campaign's flow ({} for a campaign without one).
    quiz_answers: the campaign's CrowdAnswers (those with quiz_gold count) when the caller has them."""
    flow = campaign.study_flow or {}
    if not flow:
        return {}
    return {
        "steps": [step for step in ("consent", "instructions", "practice", "survey") if flow.get(step)],
        "funnel": config.funnel(_reached(campaign)),
        "survey": config.survey_summary(flow.get("survey", []), [r["answers"] for r in survey_rows(campaign)]),
        "survey_answers": survey_rows(campaign),
        "practice_and_quiz": _practice_and_quiz(campaign, quiz_answers or []),
    }


def _reached(campaign: Campaign) -> dict[int, dict[str, float]]:
    reached: dict[int, dict[str, float]] = defaultdict(dict)
    rows = StudyStep.objects.filter(campaign=campaign).values_list("worker_id", "step", "reached_at")
    for worker_id, step, at in rows:
        reached[worker_id][step] = at.timestamp()
    return dict(reached)


def survey_rows(campaign: Campaign) -> list[dict]:
    """Every exit survey given, one row per participant: who (the platform id), when, in which
    language, skipped or its answers by question key."""
    rows = (
        SurveyResponse.objects.filter(campaign=campaign)
        .select_related("worker")
        .order_by("submitted_at", "pk")
        .values_list("worker__external_id", "worker__platform", "submitted_at", "language", "skipped", "answers")
    )
    return [
        {
            "worker": worker,
            "platform": platform,
            "submitted_at": at.isoformat(),
            "language": language,
            "skipped": skipped,
            "answers": answers,
        }
        for worker, platform, at, language, skipped, answers in rows
    ]


def _practice_and_quiz(campaign: Campaign, answers: list) -> list[dict]:
    """Per worker (the person a platform landing counts as): practice accuracy (every attempt) and
    quiz accuracy (the quiz screens of their counted work). Practice never counts toward the quiz."""
    practice = progress.practice_accuracy(campaign)
    person = dict(Worker.objects.filter(pk__in=practice).values_list("pk", "merged_into_id"))
    quiz: dict[int, list[bool]] = defaultdict(list)
    for answer in answers:
        if answer.quiz_gold is not None:
            quiz[answer.worker_id].append(answer.text == answer.quiz_gold)
    rows = []
    for worker_id, figures in sorted(practice.items()):
        counted_as = person.get(worker_id) or worker_id
        marks = quiz.get(counted_as, [])
        rows.append(
            {
                "worker": counted_as,
                "practice_accuracy": figures["accuracy"],
                "practice_attempts": figures["attempts"],
                "quiz_accuracy": round(sum(marks) / len(marks), 4) if marks else None,
                "quiz_answers": len(marks),
            }
        )
    return rows
