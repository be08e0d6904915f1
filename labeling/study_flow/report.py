"""The study flow's figures for the study report (labeling.reports.study) and the exports: the
funnel (how many arrived, consented, declined, passed or failed practice, started work,
submitted, answered the survey; the median time per step), the exit survey summarised, its
answers one row per participant, and practice accuracy beside quiz accuracy per worker."""

import csv
import io
import json
from collections import defaultdict

from labeling.models import Campaign, StudyStep, SurveyResponse, Worker
from labeling.study_flow import config, progress
from labeling.task_types.base import Export

SURVEY_COLUMNS = ("worker", "platform", "submitted_at", "language", "skipped")


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


def survey_export(campaign: Campaign, fmt: str) -> Export:
    """The exit survey's answers, one row per participant: csv (a column per question key) or
    jsonl. ValueError for another format."""
    keys = [question["key"] for question in (campaign.study_flow or {}).get("survey", [])]
    rows = survey_rows(campaign)
    name = f"campaign-{campaign.pk}-survey.{fmt}"
    if fmt == "jsonl":
        return Export("application/x-ndjson", name, (json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    if fmt != "csv":
        raise ValueError(f"format {fmt!r}: use csv or jsonl")
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*SURVEY_COLUMNS, *keys])
    for row in rows:
        writer.writerow([*(row[c] for c in SURVEY_COLUMNS), *(row["answers"].get(key, "") for key in keys)])
    return Export("text/csv; charset=utf-8", name, [out.getvalue()])
