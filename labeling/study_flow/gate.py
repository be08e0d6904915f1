"""Where the annotator's pages (labeling.pages.annotator) meet the study flow: before a claim, the flow's
next step instead while one is left; the work's steps recorded; the exit survey before the
completion code. Each costs nothing for a campaign without a flow, and a participant who has done
the steps before the work costs one indexed read per claim (progress.cleared); the work screens
themselves ask nothing (holding an assignment means the flow was done)."""

from typing import NamedTuple

from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from labeling.fast_path import compiled as fast_path
from labeling.fast_path import reads as hot_reads
from labeling.models import Assignment, Campaign, StudyStep
from labeling.study_flow import config, progress

WORK, SUBMITTED, DONE = config.WORK, config.SUBMITTED, config.DONE


class Gate(NamedTuple):
    """What the gate says of a claim: where to go instead (None: claim), the campaign to claim in
    (None: any), and whether the participant's first work screen is recorded already."""

    redirect: HttpResponse | None
    campaign: Campaign | None
    work_recorded: bool = True


def flow_first(worker, campaign: Campaign | None, *, htmx: bool = False) -> Gate:
    """A claim of any campaign (None) is one of the only open campaign when it has a flow; with
    several open, it goes ahead once every one with steps before its work has them done (one
    read), else the home page: a claim of any campaign must not land where consent was never
    asked. A participant who finished the flow costs one indexed read (their steps)."""
    if campaign is None:
        open_campaigns = hot_reads.open_campaigns()
        flows = [c for c in open_campaigns if config.steps_before_work(c.study_flow or {})]
        if not flows:
            return Gate(None, None)
        if len(open_campaigns) > 1:
            return Gate(None if progress.cleared_all(worker, flows) else redirect("labeling:worker_home"), None)
        campaign = flows[0]
    flow = campaign.study_flow or {}
    if not config.steps_before_work(flow):
        return Gate(None, campaign, work_recorded=not flow)
    reached = _steps_of(worker.pk, campaign.pk)
    if config.next_step(flow, reached) is None:
        return Gate(None, campaign, work_recorded=WORK in reached)
    return Gate(full_redirect(reverse("labeling:study_entry", args=[campaign.pk]), htmx=htmx), campaign)


# the participant's steps in a campaign, on every claim in a campaign with a flow: with the annotator
# fast path on, its SQL compiled once per process (labeling.fast_path.compiled.Compiled), as the claim's own reads
STEPS_OF = fast_path.Compiled(
    lambda worker_id, campaign_id: StudyStep.objects.filter(worker_id=worker_id, campaign_id=campaign_id).values_list(
        "step"
    ),
    fast_path.STAND_IN_WORKER,
    fast_path.STAND_IN_CAMPAIGN,
)


def _steps_of(worker_id: int, campaign_id: int) -> set[str]:
    if not fast_path.enabled():
        return set(progress.reached(worker_id, campaign_id))
    return {row[0] for row in STEPS_OF.rows(worker_id, campaign_id)}


def started_work(worker_id: int, gate: Gate) -> None:
    """Record the participant's first work screen in the campaign (once: the gate read whether)."""
    if not gate.work_recorded and gate.campaign is not None:
        progress.record(worker_id, gate.campaign.pk, WORK)


def full_redirect(url: str, *, htmx: bool = False) -> HttpResponse:
    """A whole-page redirect; for htmx an HX-Redirect (https://htmx.org/headers/hx-redirect/): a
    302 would be followed inside the request and its page swapped into the home page's body."""
    if not htmx:
        return redirect(url)
    response = HttpResponse(status=204)
    response["HX-Redirect"] = url
    return response


def reached(worker_id: int, campaign: Campaign | None, step: str) -> None:
    """Record a step of the work for a campaign with a flow (None: a claim of any campaign, which
    only reaches one without a flow)."""
    if campaign is not None and campaign.study_flow:
        progress.record(worker_id, campaign.pk, step)


def survey_first(assignment: Assignment) -> HttpResponse | None:
    """The exit survey's page when it is still due, before the completion page; else None, and
    the completion page is recorded as reached."""
    campaign = assignment.hit.campaign
    if progress.survey_due(assignment.worker_id, campaign):
        return redirect(f"{reverse('labeling:study_survey', args=[campaign.pk])}?assignment={assignment.pk}")
    reached(assignment.worker_id, campaign, DONE)
    return None
