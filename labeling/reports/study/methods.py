"""The study report's prose: the methods paragraph (every figure with its N and the choice behind
it) and the limitations paragraph (what the figures cannot show), for Markdown or LaTeX.

Each describes only what happened (provenance.py): a campaign run here has HITs, a quiz, pay and
workers; an imported one has answers from a file's columns, a source licence and a citation, and
whatever a reviewer settled here afterwards."""

from labeling.reports.study.figures import StudyReport
from labeling.reports.study.latex_escape import bibtex_key, latex_escape


def _num(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _count(value: int) -> str:
    return f"{value:,}"


class _Style:
    def __init__(self, latex: bool):
        self.latex = latex
        self.pct = "\\%" if latex else "%"
        self.kappa, self.alpha = ("$\\kappa$", "$\\alpha$") if latex else ("kappa", "alpha")
        self.quote = ("``", "''") if latex else ('"', '"')
        self.n = "$N$" if latex else "N"

    def text(self, value) -> str:
        """A value from the data (a name, a format), escaped for LaTeX."""
        return latex_escape(value) if self.latex else str(value)

    def cite(self, citation: str) -> str:
        key = bibtex_key(citation)
        if not key:
            return "no citation stored"
        return f"\\cite{{{key}}}" if self.latex else "see the source's citation"

    def interval(self, e: dict) -> str:
        if e["low"] is None:
            return _num(e["value"])
        if self.latex:
            return f"{_num(e['value'])} (95\\% CI {_num(e['low'])} to {_num(e['high'])})"
        return f"{_num(e['value'])} (95 % CI {_num(e['low'])} to {_num(e['high'])})"

    def share(self, value) -> str:
        return "n/a" if value is None else f"{value * 100:.1f}{self.pct}"


def methods_paragraph(report: StudyReport, *, latex: bool = False) -> str:
    """One paragraph with every figure filled in, each with its N."""
    data = report.as_dict()
    style = _Style(latex)
    provenance = data.get("provenance") or {"imported": False, "adjudicated": 0}
    sentences = _origin(data, provenance, style) + _agreement(data, style)
    sentences += _per_label(data, style)
    sentences += _crowd(data, style) if not provenance["imported"] else []
    sentences.append(
        f"A reviewer settled {_count(provenance['adjudicated'])} items"
        + (" here after the import." if provenance["imported"] else ".")
    )
    return " ".join(sentences)


def _origin(data: dict, provenance: dict, style: _Style) -> list[str]:
    t4, crowd = data["table4"], data["crowd"]
    open_q, close_q = style.quote
    if provenance["imported"]:
        licence = (
            f", licence {style.text(provenance['license_name'])}" if provenance["license"] else ", licence not stated"
        )
        first = [
            f"The {_count(t4['dialogues'])} dialogues and their {_count(t4['answers'])} answers were imported from a "
            f"crowd-results file ({style.text(provenance['source_format'])} format{licence}; "
            f"{style.cite(provenance['citation'])}), "
            "not collected here: no HITs, quiz or payments ran on this site, and the file's "
            f"{crowd['workers']} answer columns are not identified workers: figures per column describe the "
            "columns, and no worker's accuracy, speed or pay is given."
        ]
    else:
        first = [
            f"{_count(t4['dialogues'])} dialogues were labeled by {_count(crowd['workers'])} crowd workers in "
            f"{_count(crowd['hits'])} HITs ({_count(crowd['answers'])} answers on dialogues under the "
            f"{style.text(crowd['policy'])} policy; the fixed policy would have bought {_count(crowd['fixed_policy_answers'])} "
            "for the dialogues answered)."
        ]
    majority = (
        f"{_count(t4['majority'])} of the {_count(t4['dialogues'])} dialogues ({style.share(t4['majority_share'])}) "
        f"received a label by strict majority vote, with labels typed through {open_q}Other{close_q} counted as "
        f"given ({_count(t4['majority_gold'])} once typed labels are matched to the label set); answers on "
        f"{_count(t4['typed_dialogues'])} dialogues include a typed label."
    )
    return [*first, majority]


def _agreement(data: dict, style: _Style) -> list[str]:
    t4, agreement = data["table4"], data["agreement"]
    overall = agreement["overall"]
    return [
        f"Agreement over the {_count(t4['agreement_items'])} dialogues with two answers or more "
        f"({style.n} = {_count(t4['answers'])} answers, {_count(t4['categories'])} categories: every label given, "
        "each typed label its own) was "
        f"Fleiss' {style.kappa} = {style.interval(overall['fleiss_kappa'])}, "
        f"Krippendorff's {style.alpha} (nominal) = {style.interval(overall['krippendorff_alpha'])} and "
        f"Gwet's AC1 = {style.interval(overall['gwet_ac1'])}, AC1's chance term over those "
        f"{_count(t4['categories'])} categories; intervals are percentile bootstraps over dialogues "
        f"({_count(agreement['resamples'])} resamples, seed {agreement['seed']})."
    ]


def _per_label(data: dict, style: _Style) -> list[str]:
    return [
        "Per label we report Fleiss' category kappa and positive specific agreement (of the pairs of answers "
        "on one dialogue that include the label, the share where both are it, with the number of dialogues "
        "where the label was given); per-label AC1 and alpha, computed one label against all others, approach "
        "1 for every label when there are many labels (the other labels dominate both raters' answers), and "
        "are not used to compare labels."
    ]


def _crowd(data: dict, style: _Style) -> list[str]:
    t4, crowd = data["table4"], data["crowd"]
    sentences = []
    if t4["quiz_bonus_share"] is not None:
        sentences.append(
            f"{style.share(t4['quiz_bonus_share'])} of the {t4['quiz_workers']} workers who took the quiz "
            f"reached the bonus mark of {t4['quiz_bonus_mark']} correct answers."
        )
    spread = crowd["hits_per_worker"]
    if crowd["workers"]:
        sentences.append(
            f"Each worker did a median of {_num(spread['median'], 1)} HITs (90th percentile "
            f"{_num(spread['p90'], 1)}, maximum {_num(spread['maximum'], 0)}; {style.n} = {crowd['workers']} workers)."
        )
    if crowd["effective_hourly_pay"] is not None:
        minimum = crowd["platform_minimum"]
        sentences.append(
            f"A HIT took a median of {_minutes(crowd['median_minutes_per_hit'])} ({style.n} = {_count(crowd['hits'])} "
            f"HITs), an effective pay of {_num(crowd['effective_hourly_pay'], 2)} {style.text(data['campaign']['currency'])} per hour"
            + (f" (platform minimum {_num(minimum, 2)})." if minimum is not None else ".")
        )
    accuracy = crowd["dawid_skene_accuracy"]
    if accuracy["count"]:
        flagged = (
            f"{crowd['flagged_workers']} workers were flagged as too fast and {crowd['blocked_workers']} blocked."
            if crowd["flagged_workers"] is not None
            else f"{crowd['blocked_workers']} workers were blocked."
        )
        sentences.append(
            f"Dawid-Skene estimated a median worker accuracy of {_num(accuracy['median'])} (10th to 90th "
            f"percentile {_num(accuracy['p10'])} to {_num(accuracy['p90'])}; {style.n} = {accuracy['count']} workers); "
            + flagged
        )
    return sentences


def _minutes(minutes: float | None) -> str:
    if minutes is None:
        return "n/a"
    return f"{minutes:.1f} minutes" if minutes >= 1 else f"{minutes * 60:.1f} seconds"


def limitations_paragraph(report: StudyReport, *, latex: bool = False) -> str:
    """What the figures cannot show."""
    data = report.as_dict()
    provenance = data.get("provenance") or {"imported": False}
    style = _Style(latex)
    open_q, close_q = style.quote
    sentences = [
        "The majority is not ground truth: it is what most answers said, and each rater's kappa against it "
        "leans high because the rater's own answer is part of it (the pairwise kappas do not have this lean).",
        "Agreement says how consistently the answers fell, not whether the label set fits the dialogues; "
        f"answers typed through {open_q}Other{close_q} count as their own categories, which lowers agreement "
        "where a typed label spells a listed one.",
        "Intervals resample dialogues, not raters: they do not cover what another crowd would have answered.",
    ]
    if provenance["imported"]:
        sentences.append(
            "The imported file records neither who gave an answer nor when: an answer column mixes many people, "
            "so nothing here describes a worker, their speed or their pay, and the suggestions or screens the "
            "source's workers saw are not known."
        )
    else:
        sentences.append(
            "Workers chose among a model's top three suggestions, so answers lean toward that model; a model rater "
            "scored against this gold shares the lean, and one that learned from the gold is scored on held-out "
            "dialogues only."
        )
    return " ".join(sentences)
