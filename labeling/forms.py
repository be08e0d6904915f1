"""The researcher's campaign form: the campaign's settings and which dialogues go into its HITs."""

import re

from django import forms
from django.db.models import QuerySet

from annotation.models import Dialogue, Label, TurnLabel
from labeling.campaigns import DEFAULT_FALLBACK_CHOICES
from labeling.models import Campaign, HITItem

RECENT, ALL = "recent", "all"


def candidate_dialogues(language: str | None = None) -> QuerySet[Dialogue]:
    """Dialogues with no crowd label that no campaign has put into a HIT yet, newest first; with a
    `language`, only those a campaign in it may show (`Dialogue.objects.in_language`)."""
    crowd_labeled = TurnLabel.objects.filter(source=TurnLabel.CROWD).values("turn__dialogue_id")
    in_hits = HITItem.objects.filter(dialogue__isnull=False).values("dialogue_id")
    dialogues = Dialogue.objects.filter(turn_count__gt=0)
    if language:
        dialogues = dialogues.in_language(language)
    return dialogues.exclude(pk__in=crowd_labeled).exclude(pk__in=in_hits).order_by("-pk")


class CampaignForm(forms.ModelForm):
    labels = forms.ModelMultipleChoiceField(
        queryset=Label.objects.filter(is_active=True),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="the label set the HITs offer and accept; none ticked means every label annotators see",
    )
    fallback_choices = forms.CharField(
        initial=", ".join(DEFAULT_FALLBACK_CHOICES),
        help_text="three label names, comma-separated, shown when a turn has no weak-labeler prediction",
    )
    selection = forms.ChoiceField(
        choices=[(RECENT, "The N most recent dialogues without a crowd label"), (ALL, "All candidates")],
        initial=RECENT,
    )
    dialogue_count = forms.IntegerField(min_value=1, initial=150, required=False, label="N")

    language = forms.CharField(
        max_length=8,
        required=False,
        initial="en",
        help_text="only dialogues identified in this language become items (ISO 639 code; empty: en)",
    )

    class Meta:
        model = Campaign
        fields = [
            "name",
            "description",
            "language",
            "labels",
            "dialogues_per_hit",
            "quiz_per_hit",
            "workers_per_hit",
            "reward",
            "bonus",
            "quiz_pass_mark",
            "time_limit_minutes",
            "fallback_choices",
            "tie_breaking",
            "tie_break_workers",
            "currency",
            "approval_quiz_mark",
            "below_mark",
        ]

    # platform settings: optional in the form, the model's defaults when left empty
    OPTIONAL = ("currency", "approval_quiz_mark", "below_mark")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in self.OPTIONAL:
            self.fields[name].required = False

    def clean_language(self) -> str:
        code = (self.cleaned_data.get("language") or "en").strip().lower()
        if not re.fullmatch(r"[a-z]{2,3}", code):
            raise forms.ValidationError("an ISO 639 language code such as en, pt or deu")
        return code

    def clean_fallback_choices(self) -> list[str]:
        names = [name.strip() for name in self.cleaned_data["fallback_choices"].split(",") if name.strip()]
        known = Label.objects.filter(is_active=True).by_names(names)
        unknown = [name for name in names if name not in known]
        if unknown:
            raise forms.ValidationError(f"not labels: {', '.join(unknown)}")
        resolved = [known[name].name for name in names]
        if len(set(resolved)) != 3:
            raise forms.ValidationError("give exactly three different labels")
        return resolved

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("selection") == RECENT and not cleaned.get("dialogue_count"):
            self.add_error("dialogue_count", "say how many dialogues")
        for field in ("dialogues_per_hit", "workers_per_hit", "tie_break_workers"):
            if cleaned.get(field) == 0:
                self.add_error(field, "must be at least 1")
        return cleaned

    def campaign_settings(self) -> dict:
        """The campaign's fields for `create_campaign`, beside its name and label set."""
        chosen = {name: self.cleaned_data[name] for name in self.Meta.fields if name not in ("name", "labels")}
        return {name: value for name, value in chosen.items() if not (name in self.OPTIONAL and value in ("", None))}

    def selected_dialogues(self, language: str | None = None) -> QuerySet[Dialogue]:
        candidates = candidate_dialogues(language)
        if self.cleaned_data["selection"] == RECENT:
            return candidates[: self.cleaned_data["dialogue_count"]]
        return candidates
