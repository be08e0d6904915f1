"""Comparing our label distribution with a reference one (e.g. EmpatheticDialogues' label counts).

Direction: D_KL(ours || reference) = sum_i p_i * ln(p_i / q_i), in nats, where p is our distribution
and q the reference. It reads "how many extra nats we pay describing our labels with the reference's
frequencies"; it is zero only when the two match and it is not symmetric.

Zero counts: both distributions are smoothed additively before normalising,
p_i = (count_i + alpha) / (total + alpha * K) over the K labels compared, so a label the reference
never uses does not make the divergence infinite. alpha defaults to 1 (Laplace); with alpha = 0 a
label we use that the reference lacks gives math.inf, and labels with p_i = 0 add nothing.
"""

import csv
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from annotation.export.cells import BadRecord, checked_records
from annotation.taxonomy import canonical_label, normalise_label_name

DEFAULT_SMOOTHING = 1.0
UNION = "union"  # compare over every label either side has
REFERENCE = "reference"  # compare over the reference's labels only (ours outside them are dropped)


class ReferenceFileError(ValueError):
    """A reference CSV that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class ComparisonRow:
    label: str
    ours: int
    ours_share: float
    reference: int
    reference_share: float


@dataclass(frozen=True)
class DistributionComparison:
    rows: list[ComparisonRow]
    kl_divergence: float  # D_KL(ours || reference) in nats, on the smoothed distributions
    smoothing: float
    support: str
    ours_total: int
    reference_total: int
    dropped_labels: list[str]  # ours, outside the reference, left out when support is "reference"


def parse_label_counts(lines: Iterable[str], filename: str = "reference file") -> dict[str, int]:
    """Read `label,count` rows (a header row `label,count` is optional) into {label: count}.

    Label names matching the taxonomy take its spelling, so "afraid" and "Afraid" are one label.
    """
    counts: dict[str, int] = {}
    try:
        for line_number, row in checked_records(csv.reader(lines)):
            _add_count(counts, row, line_number, filename)
    except BadRecord as error:
        raise ReferenceFileError(f"{filename} line {error.line}: {error.reason}") from error
    if not counts:
        raise ReferenceFileError(f"{filename}: no label counts found")
    if sum(counts.values()) == 0:
        raise ReferenceFileError(f"{filename}: every count is zero")
    return counts


def _add_count(counts: dict[str, int], row: list[str], line_number: int, filename: str) -> None:
    if not row or all(not cell.strip() for cell in row):
        return
    where = f"{filename} line {line_number}"
    if len(row) != 2:
        raise ReferenceFileError(f"{where}: expected 2 columns 'label,count', found {len(row)}")
    label, count_text = row[0].strip(), row[1].strip()
    if line_number == 1 and label.lower() == "label" and count_text.lower() == "count":
        return
    if not label:
        raise ReferenceFileError(f"{where}: the label is empty")
    try:
        count = int(count_text)
    except ValueError:
        raise ReferenceFileError(f"{where}: count {count_text[:20]!r} is not a whole number")
    if count < 0:
        raise ReferenceFileError(f"{where}: count {count} is negative")
    name = canonical_label(label) or label
    if name in counts:
        raise ReferenceFileError(f"{where}: label {name!r} appears twice")
    counts[name] = count


def kl_divergence(ours: Iterable[float], reference: Iterable[float], smoothing: float = DEFAULT_SMOOTHING) -> float:
    """D_KL(P || Q) in nats for aligned counts, after adding `smoothing` to every count."""
    if smoothing < 0:
        raise ValueError("smoothing must be zero or positive")
    p_counts = [c + smoothing for c in ours]
    q_counts = [c + smoothing for c in reference]
    if len(p_counts) != len(q_counts):
        raise ValueError("the two distributions must have the same labels")
    p_total, q_total = sum(p_counts), sum(q_counts)
    if p_total <= 0 or q_total <= 0:
        raise ValueError("both distributions need at least one count")
    divergence = 0.0
    for p_count, q_count in zip(p_counts, q_counts, strict=True):
        p, q = p_count / p_total, q_count / q_total
        if p == 0:
            continue
        if q == 0:
            return math.inf
        divergence += p * math.log(p / q)
    return divergence


def compare_distributions(
    ours: Mapping[str, int],
    reference: Mapping[str, int],
    *,
    smoothing: float = DEFAULT_SMOOTHING,
    support: str = UNION,
) -> DistributionComparison:
    """Both distributions side by side over a shared label list, and D_KL(ours || reference).

    Labels are matched ignoring case and spacing; the list follows the reference's order, then ours.
    """
    if support not in (UNION, REFERENCE):
        raise ValueError(f"support must be {UNION!r} or {REFERENCE!r}")
    ours_by_key = {normalise_label_name(name): (name, count) for name, count in ours.items()}
    reference_by_key = {normalise_label_name(name): (name, count) for name, count in reference.items()}
    keys = list(reference_by_key)
    dropped = [name for key, (name, count) in ours_by_key.items() if key not in reference_by_key and count]
    if support == UNION:
        keys += [key for key in ours_by_key if key not in reference_by_key]
        dropped = []
    ours_counts = [ours_by_key.get(key, ("", 0))[1] for key in keys]
    reference_counts = [reference_by_key.get(key, ("", 0))[1] for key in keys]
    ours_total, reference_total = sum(ours_counts), sum(reference_counts)
    rows = [
        ComparisonRow(
            label=(ours_by_key.get(key) or reference_by_key[key])[0],
            ours=o,
            ours_share=o / ours_total if ours_total else 0.0,
            reference=r,
            reference_share=r / reference_total if reference_total else 0.0,
        )
        for key, o, r in zip(keys, ours_counts, reference_counts, strict=True)
    ]
    return DistributionComparison(
        rows=rows,
        kl_divergence=kl_divergence(ours_counts, reference_counts, smoothing),
        smoothing=smoothing,
        support=support,
        ours_total=ours_total,
        reference_total=reference_total,
        dropped_labels=dropped,
    )
