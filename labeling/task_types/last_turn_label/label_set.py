"""A label campaign's label set and its three fallback choices, as its creator gives them."""

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from labeling.task_types.base import ConfigRefused
from labeling.work.label_sets import campaign_labels, default_label_set

# shown when a dialogue's target turn has no weak-labeler prediction, unless the campaign says otherwise
DEFAULT_FALLBACK_CHOICES = ("Neutral", "Questioning", "Acknowledging")


def clean_label_set(labels: list[Label], names: list[str] | None) -> tuple[list[Label], list[str]]:
    """(the label set, the fallback choices): `labels`, or every offered label when none are given;
    `names` (three labels of the set, in the taxonomy's spelling once saved), or by default
    DEFAULT_FALLBACK_CHOICES (the set's first three when those are not in it)."""
    label_set = labels or list(default_label_set())
    if len(label_set) < 3:
        raise ConfigRefused("labels", "a campaign needs at least three labels to offer")
    return label_set, fallback_in(label_set, names)


def fallback_in(label_set: list[Label], names: list[str] | None) -> list[str]:
    by_key = Label.objects.filter(pk__in=[label.pk for label in label_set]).by_names(names or DEFAULT_FALLBACK_CHOICES)
    if not names:
        if len(by_key) == len(DEFAULT_FALLBACK_CHOICES):
            return [by_key[name].name for name in DEFAULT_FALLBACK_CHOICES]
        return [label.name for label in sorted(label_set, key=lambda lb: (lb.position, lb.name))[:3]]
    outside = [name for name in names if name not in by_key]
    if outside:
        raise ConfigRefused("fallback_choices", f"not in the campaign's label set: {', '.join(outside)}")
    resolved = [by_key[name].name for name in names]
    if len(set(resolved)) != 3:
        raise ConfigRefused("fallback_choices", "give exactly three different labels")
    return resolved


def label_set_names(campaign) -> set[str]:
    """The campaign's label names, folded by normalise_label_name."""
    return {normalise_label_name(name) for name in campaign_labels(campaign).values_list("name", flat=True)}
