"""The demo's whole loop as one job (`demo_build`, queued by `manage.py demo_setup`): the weak
labeler, the quiz pool (whole dialogues with a known label, imported as a researcher would), the
demo campaign, a simulated crowd on it, aggregation and payments, the gold split,
a short self-labeling run (its rounds include the SBERT expansion), the suggestion model learned
from the gold, bulk annotation, a small BotsTalk corpus (skill classifier, NLI, generation from the
demo corpus's pairs) with a pairwise campaign comparing it with the subtitles, and the exports.

Every step is its own JobRun, run in this worker one after another (queuing them would deadlock a
worker of concurrency 1 waiting on itself), so the Jobs page shows each with its result. A step
that succeeded once is not run again, and the crowd skips full HITs: a rerun, or a run after a
killed one, only does what is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from annotation.models import ModelVersion
from jobs import registry
from jobs.models import JobRun
from jobs.registry import JobParameters, register
from jobs.runtime import JobCannotRun, relaying_progress, report_progress, run_job

DEMO_CAMPAIGN = "Demo campaign"
QUIZ_POOL_FILE = "quiz_pool.csv"  # under MEDIA_ROOT/demo/, beside the corpus folder
EXPORTS = (("gold", "csv"), ("extended", "jsonl"), ("silver", "csv"), ("gold", "hf"))


class DemoBuildParameters(JobParameters):
    truth_path: str = Field(max_length=500, title="truth.jsonl of the demo corpus")
    campaign_name: str = Field(DEMO_CAMPAIGN, max_length=200, title="Campaign")
    min_confidence: float = Field(0.5, ge=0.0, le=1.0, title="Prefilter")
    per_label: int = Field(9, ge=1, le=1000, title="Candidates per label")
    leave_open: int = Field(2, ge=0, le=1000, title="HITs left open for people")
    epochs: int = Field(1, ge=1, le=10, title="Dialogue classifier epochs per round")
    lr: float = Field(1e-4, gt=0, le=0.01, title="Learning rate")
    head_lr: float = Field(3e-3, gt=0, le=0.1, title="Head learning rate")
    self_per_label: int = Field(5, ge=1, le=1000, title="Self labels per label")
    botstalk: bool = Field(True, title="Generate a BotsTalk corpus and a pairwise campaign")
    campaign_only: bool = Field(False, title="Stop once the campaign's HITs are built (bench/quiz_tells.py)")


STAGES = (
    "campaign", "crowd", "aggregate", "gold_split", "self_label_rounds", "suggest_train", "bulk_annotate", "botstalk",
    "dataset_utility", "export",
)  # fmt: skip
STAGE_STEPS = 10  # the demo's progress runs to len(STAGES) * 10 = 100, each stage's child moving it within its 10
# Table 7 in miniature: a tiny model, two epochs, a small beam (seconds on a CPU, not a result)
DEMO_UTILITY = {
    "finetune": "gold", "test_sets": "raw", "layers": 1, "heads": 2, "hidden": 32, "ffn": 64, "vocab_size": 1000,
    "max_context_tokens": 32, "max_response_tokens": 16, "max_epochs": 2, "lr": 0.003, "beam_size": 4,
    "generate_limit": 30, "max_pairs": 2000, "name": "Demo dialogue models (Table 7)",
}  # fmt: skip
PAIRWISE_CAMPAIGN = "Demo: BotsTalk vs subtitles"


def demo_build(job: JobRun, truth_path: str, campaign_name: str = DEMO_CAMPAIGN, **options: Any) -> dict[str, Any]:
    """Build the whole demo (weak labels, a campaign answered by a simulated crowd, aggregation,
    payments, rounds, bulk annotation, BotsTalk, exports), each step a child job run once."""
    done: dict[str, Any] = {}
    current = {"index": 0, "name": "", "reached": 0}

    def stage(index: int, name: str) -> None:
        current.update(index=index, name=name, reached=index * STAGE_STEPS)
        report_progress(job, index * STAGE_STEPS, len(STAGES) * STAGE_STEPS, name)

    def step_progress(child: JobRun) -> None:
        """A step's own progress moves the demo's within that step's share (its longest step, bulk
        annotation, would otherwise show one line for minutes)."""
        if child.pk == job.pk or not child.progress_total:
            return
        share = min(child.progress_done / child.progress_total, 1.0)
        # never back: a step may report phases of its own, each counting from 0 again
        reached = max(current["reached"], current["index"] * STAGE_STEPS + int((STAGE_STEPS - 1) * share))
        current["reached"] = reached
        report_progress(job, reached, len(STAGES) * STAGE_STEPS, f"{current['name']}: {child.message}".rstrip(": "))

    with relaying_progress(step_progress):
        return _build(job, truth_path, campaign_name, stage, done, options)


def _build(job: JobRun, truth_path: str, campaign_name: str, stage, done: dict[str, Any], options) -> dict[str, Any]:
    from labeling.models import Campaign
    from labeling.services.campaigns import set_campaign_status

    stage(0, "weak labeler and campaign")
    campaign = _demo_campaign(campaign_name)
    if campaign is None:
        done["campaign"] = _campaign_steps(job, campaign_name, Path(truth_path), options)
        campaign = _demo_campaign(campaign_name)
        if campaign is None:
            raise JobCannotRun("the pipeline built no demo campaign (no candidates?)")
    if campaign.status == Campaign.DRAFT:
        set_campaign_status(campaign, Campaign.OPEN)
    if options.get("campaign_only"):
        return {"campaign": campaign.pk, "steps": done}
    stage(1, "simulated crowd")
    done["crowd"] = _crowd(campaign, Path(truth_path), options["leave_open"])
    stage(2, "aggregating")
    done["aggregate"] = _child(job, "labeling.aggregate_campaign", {"campaign_id": campaign.pk})
    done["payments"] = _payments(campaign)
    done["policies"] = _policy_campaigns(Path(truth_path))
    stage(3, "gold split")
    done["gold_split"] = _child(job, "gold_split", {})
    # No separate sbert_expand step before the rounds: it would take the neighbours of the gold that
    # the rounds' own "+SBERT" round is there to add, and the rounds table would show no gain.
    stage(4, "self-labeling rounds (with SBERT expansion)")
    rounds = {key: options[key] for key in ("epochs", "lr", "head_lr", "self_per_label")}
    done["self_label_rounds"] = _child(job, "self_label_rounds", rounds)
    stage(5, "suggestion model learned from the gold")
    done["suggest_train"] = _child(job, "suggest_train", {})
    stage(6, "bulk annotation")
    newest = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-created_at", "-pk").first()
    if newest is not None:
        done["bulk_annotate"] = _child(job, "bulk_annotate", {"model_version_id": newest.pk})
    if options.get("botstalk", True):
        stage(7, "BotsTalk corpus and a pairwise campaign")
        done.update(_botstalk(job))
    stage(8, "dataset utility: dialogue models pre-trained on the corpus, fine-tuned on the gold")
    done["dataset_utility"] = _optional_child(job, "dataset_utility", DEMO_UTILITY)
    stage(9, "exports")
    for kind, file_format in EXPORTS:
        done[f"export {kind} {file_format}"] = _child(job, "export_dataset", {"kind": kind, "format": file_format})
    report_progress(job, len(STAGES) * STAGE_STEPS, len(STAGES) * STAGE_STEPS, "demo ready")
    return {"campaign": campaign.pk, "steps": done}


def _botstalk(job: JobRun) -> dict[str, Any]:
    """The example skill pool and contexts (mlworkers/data/botstalk/): a skill classifier and an NLI
    trained on them, one generation run whose agents speak from the demo corpus's own
    interaction-response pairs (ingested before this job; the emotion agent ranks by the dialogue
    classifier the rounds trained), then a pairwise campaign (ACUTE-Eval) of its dialogues against
    the subtitles, left open for the demo annotators."""
    from labeling.models import Campaign
    from labeling.services.campaigns import create_pairwise_campaign, set_campaign_status

    done: dict[str, Any] = {
        "skill_train": _child(job, "skill_train", {"name": "demo skill classifier"}),
        "nli_train": _child(job, "nli_train", {"name": "demo NLI"}),
    }
    done["botstalk"] = _child(job, "botstalk", {})
    campaign = Campaign.objects.filter(name=PAIRWISE_CAMPAIGN).first()
    if campaign is None:
        campaign, _ = create_pairwise_campaign(
            PAIRWISE_CAMPAIGN, source_a="source:botstalk", source_b="subtitles", count=6, seed=1,
            dialogues_per_hit=3, quiz_per_hit=1, workers_per_hit=3, created_by=job.created_by,
        )  # fmt: skip
    if campaign.status == Campaign.DRAFT:
        set_campaign_status(campaign, Campaign.OPEN)
    done["pairwise_campaign"] = campaign.pk
    return done


def _demo_campaign(name: str):
    """The campaign an earlier ranking built under `name` (its result names it, whatever name the
    campaign was saved under), else one called so."""
    from labeling.models import Campaign

    ranked = JobRun.objects.filter(kind="rank_candidates", status=JobRun.SUCCEEDED).order_by("-pk")
    for parameters, result in ranked.values_list("parameters", "result"):
        if parameters.get("campaign_name") == name and (result or {}).get("campaign"):
            return Campaign.objects.filter(pk=result["campaign"]).first()
    return Campaign.objects.filter(name=name).order_by("pk").first()


def _campaign_steps(job: JobRun, campaign_name: str, truth_path: Path, options: dict[str, Any]) -> dict[str, Any]:
    """Weak labeler, then the quiz pool, then the campaign from the candidates the pool left."""
    from mlworkers.chain.pipeline import run_steps

    chosen = {"campaign_name": campaign_name, "min_confidence": options["min_confidence"]}
    chosen["per_label"] = options["per_label"]
    weak = [child.pk for child in run_steps(["weak_train", "weak_apply"], chosen, user=job.created_by)]
    pool = _quiz_pool(truth_path, options["min_confidence"], options["per_label"])
    ranked = [child.pk for child in run_steps(["rank_candidates"], chosen, user=job.created_by)]
    return {"jobs": weak + ranked, "quiz_pool": pool}


def _quiz_pool(truth_path: Path, min_confidence: float, per_label: int) -> int:
    """Fill the quiz pool as a researcher would: a file of whole dialogues whose label is known
    (here the demo corpus's truth), imported with `import_quiz`'s importer, before the campaign's
    HITs are built. Which dialogues: every other one, by rank within its label, of the candidates
    the campaign draws from, so quiz and work screens come from the same mix of labels, lengths
    and suggestion confidence (and the campaign then skips them). Lines written for two labels
    are left out: a quiz answer should not be a coin toss. Returns the pool items imported."""
    from labeling.platforms.simulated_crowd import read_truth
    from labeling.services.importers.quiz import import_quiz_file
    from mlworkers.chain.candidates import ranked_candidates

    if not truth_path.is_file():
        raise JobCannotRun(f"{truth_path}: no such file (demo_setup writes it with the corpus)")
    suggester = ModelVersion.objects.suggester()  # the model rank_candidates ranks by next
    ranked = ranked_candidates(suggester, min_confidence=min_confidence, per_label=2 * per_label)
    rows = quiz_pool_rows(ranked, read_truth(truth_path))
    path = truth_path.parent.parent / QUIZ_POOL_FILE
    path.write_text(_csv(rows), encoding="utf-8")
    return len(import_quiz_file(path))


def quiz_pool_rows(ranked, truth) -> list[tuple[int, str]]:
    """(dialogue id, known label) for every second candidate by rank (2, 4, ...) within its label
    whose last turn the truth gives one label; the campaign keeps the best of each label."""
    from annotation.demo_corpus.generator import normalised

    rows = []
    for entry in ranked:
        known = truth.get(normalised(entry.candidate.text))
        if entry.rank % 2 == 0 and known is not None and not known.alt:
            rows.append((entry.candidate.dialogue_id, known.label))
    return rows


def _csv(rows: list[tuple[int, str]]) -> str:
    lines = ["dialogue,label,explanation"]
    lines += [f"{dialogue_id},{label},The demo corpus wrote this line for {label}." for dialogue_id, label in rows]
    return "\n".join(lines) + "\n"


def _crowd(campaign, truth_path: Path, leave_open: int) -> dict[str, int]:
    from labeling.platforms.simulated_crowd import read_truth, simulate_campaign

    if not truth_path.is_file():
        raise JobCannotRun(f"{truth_path}: no such file (demo_setup writes it with the corpus)")
    _study_flow(campaign)
    report = simulate_campaign(campaign, read_truth(truth_path), leave_open=leave_open)
    return {"hits": report.hits, "assignments": report.assignments, "responses": report.responses}


def _study_flow(campaign) -> None:
    """The demo campaign's study flow, all of it (consent, instructions, three practice items,
    three survey questions, Arabic texts): a participant new to it meets every step, and the
    simulated crowd walks it before its work (labeling.platforms.simulated_crowd)."""
    from labeling.services.campaigns import change_campaign_settings
    from labeling.study_flow.demo import DEMO_FLOW

    if not campaign.study_flow:
        change_campaign_settings(campaign, {"study_flow": DEMO_FLOW}, "the demo's study flow")


# two small campaigns beside the demo campaign (which keeps `fixed`), answered by the simulated
# crowd round after round until their redundancy policy settles every item; no quiz screens (the
# demo's quiz pool is sized for its own campaign). The demo's weak labeler is trained on a few
# lines, so its probabilities are low: model_informed trusts it from 0.5 here, not the form's 0.9.
POLICY_CAMPAIGNS = (
    ("Demo: until agreement", {"redundancy_policy": "until_agreement"}),
    ("Demo: model-informed", {"redundancy_policy": "model_informed", "model_threshold": 0.5}),
)
POLICY_DIALOGUES = 12


def _policy_campaigns(truth_path: Path) -> dict[str, dict]:
    from labeling.models import Campaign, QuizQuestion
    from labeling.pages.forms import candidate_dialogues
    from labeling.platforms.simulated_crowd import read_truth, simulate_until_settled
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
    from labeling.work.hits import build_hits
    from labeling.work.policy import answers_bought

    done = {}
    for name, settings in POLICY_CAMPAIGNS:
        campaign = Campaign.objects.filter(name=name).first()
        if campaign is None:
            quiz = QuizQuestion.objects.filter(dialogue__isnull=False).values("dialogue_id")
            dialogues = list(candidate_dialogues("en").exclude(pk__in=quiz)[:POLICY_DIALOGUES])
            if not dialogues:
                continue
            campaign = create_campaign(name, dialogues_per_hit=3, quiz_per_hit=0, **settings)
            build_hits(campaign, dialogues, seed=15)
            set_campaign_status(campaign, Campaign.OPEN)
        simulate_until_settled(campaign, read_truth(truth_path))
        aggregate_campaign(campaign)
        done[name] = answers_bought(campaign)
    return done


def _payments(campaign) -> dict[str, int]:
    from labeling.services.payments import approve_submitted, record_payments

    return {"approved": approve_submitted(campaign), **record_payments(campaign)}


def _child(parent: JobRun, kind: str, parameters: dict[str, Any]) -> int | str:
    """Run `kind` as its own JobRun here, unless one with these parameters succeeded already."""
    checked = registry.get(kind).validate(parameters)
    succeeded = JobRun.objects.filter(kind=kind, status=JobRun.SUCCEEDED).order_by("-pk")
    earlier = next((pk for pk, given in succeeded.values_list("pk", "parameters") if given == checked), None)
    if earlier is not None:
        return f"job {earlier} (earlier)"
    child = JobRun.objects.create(kind=kind, parameters=checked, created_by=parent.created_by)
    run_job(child.pk)
    child.refresh_from_db()
    if child.status != JobRun.SUCCEEDED:
        raise JobCannotRun(f"{kind} (job #{child.pk}) {child.status}: {child.error or child.message}")
    return child.pk


def _optional_child(parent: JobRun, kind: str, parameters: dict[str, Any]) -> int | str:
    """A step the demo can do without: on a corpus too small for it (no gold in some split), the
    demo goes on and its result says why the step was skipped."""
    try:
        return _child(parent, kind, parameters)
    except JobCannotRun as reason:
        return f"skipped: {reason}"


register("demo_build", queue="ml", parameters=DemoBuildParameters)(demo_build)
