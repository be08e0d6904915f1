"""The campaign dashboard's charts, drawn from the report (labeling.reports.campaign.campaign_report):
where the labels went, how much workers agree on each, and each worker's accuracy against speed
(a label campaign's figures; a campaign of another task type has none, and empty charts)."""

from annotation.analysis.plots import BarChart, ScatterPlot, bar_chart, scatter_plot

MOST_LABELS = 25  # a phone-sized chart; the table below holds every label


def report_plots(report: dict) -> dict[str, BarChart | ScatterPlot]:
    labels = report.get("labels", [])
    by_majority = sorted((row for row in labels if row["majority"]), key=lambda row: (-row["majority"], row["label"]))
    agreement = sorted(
        (row for row in labels if row["majority_rate"] is not None), key=lambda row: (-row["items"], row["label"])
    )
    return {
        "label_distribution": bar_chart(
            "Label distribution: items each label won by majority",
            [(row["label"], row["majority"]) for row in by_majority[:MOST_LABELS]],
        ),
        "agreement_per_label": bar_chart(
            "Agreement per label: of the items anyone gave a label, the share it won",
            [(row["label"], row["majority_rate"]) for row in agreement[:MOST_LABELS]],
            max_value=1.0,
            digits=2,
        ),
        "worker_accuracy": scatter_plot(
            "Worker accuracy against speed: agreement with the majority, quiz accuracy for a worker with no "
            "agreement figure (red: too fast or blocked)",
            [
                (row["worker"], row["median_seconds"], _accuracy(row), row["too_fast"] or row["status"] == "blocked")
                for row in report.get("workers", [])
            ],
            x_title="median seconds per screen",
            y_title="accuracy",
        ),
    }


def _accuracy(row: dict) -> float | None:
    agreement = row["agreement_with_majority"]
    return agreement if agreement is not None else row["quiz_accuracy"]


def study_report_plots(data: dict) -> dict[str, BarChart]:
    """The study report's charts, from its paper tables (labeling/reports/study/tables.py): majority
    dialogues per label, each rater's Cohen's kappa against the majority, specific agreement per
    label and the most frequent disagreements with the majority."""
    tables = data.get("tables") or {}
    noun = (data.get("provenance") or {}).get("rater_noun", "worker")
    disagreements = sorted(
        (c for c in tables.get("confusion", []) if c["majority"] != c["answer"]), key=lambda c: -c["count"]
    )
    specific = sorted(
        (row for row in tables.get("specific_agreement", []) if row["value"] is not None and row["items"]),
        key=lambda row: (-row["items"], row["label"]),
    )
    return {
        "labels": bar_chart(
            "Label distribution: dialogues each label won by majority",
            [(row["label"], row["majority_items"]) for row in tables.get("label_distribution", [])[:MOST_LABELS]],
        ),
        "rater_kappa": bar_chart(
            f"Each {noun}'s Cohen's kappa against the majority",
            [(row["rater"], row["kappa"]) for row in tables.get("worker_kappa", [])[:MOST_LABELS]],
            max_value=1.0,
            digits=2,
        ),
        "specific_agreement": bar_chart(
            "Specific agreement per label (most given first)",
            [(row["label"], row["value"]) for row in specific[:MOST_LABELS]],
            max_value=1.0,
            digits=2,
        ),
        "disagreements": bar_chart(
            f"Most frequent disagreements: majority label -> a {noun}'s answer",
            [(f"{c['majority']} -> {c['answer']}", c["count"]) for c in disagreements[:MOST_LABELS]],
        ),
    }
