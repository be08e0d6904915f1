"""The researcher's campaign form: the campaign's settings and which dialogues go into its HITs."""

import re

from django import forms
from django.db.models import QuerySet

from annotation.models import Dialogue, Label, TurnLabel
from labeling.crowd import qualification, redundancy
from labeling.crowd.redundancy import FIXED, SUGGESTED_THRESHOLD
from labeling.models import Campaign, HITItem
from labeling.study_flow.config import FlowRefused, clean_flow
from labeling.task_types.last_turn_label.label_set import DEFAULT_FALLBACK_CHOICES

RECENT, ALL = "recent", "all"
QUALIFICATION_FIELDS = ("qualification_items", "qualification_mark")


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
            "estimated_minutes",
            "fallback_choices",
            "tie_breaking",
            "tie_break_workers",
            "redundancy_policy",
            "redundancy_cap",
            "model_threshold",
            "posterior_below",
            "qualification_required",
            "qualification_items",
            "qualification_mark",
            "qualification_reward",
            "currency",
            "approval_quiz_mark",
            "below_mark",
            "study_flow",
        ]

    # platform settings: optional in the form, the model's defaults when left empty
    OPTIONAL = (
        "currency",
        "approval_quiz_mark",
        "below_mark",
        "estimated_minutes",
        "redundancy_policy",
        "redundancy_cap",
        "qualification_items",
        "qualification_mark",
        "qualification_reward",
        "study_flow",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in self.OPTIONAL:
            self.fields[name].required = False
        self.fields["model_threshold"].initial = SUGGESTED_THRESHOLD

    def clean_language(self) -> str:
        code = (self.cleaned_data.get("language") or "en").strip().lower()
        if not re.fullmatch(r"[a-z]{2,3}", code):
            raise forms.ValidationError("an ISO 639 language code such as en, pt or deu")
        return code

    def clean_study_flow(self) -> dict:
        """The study flow as JSON (labeling.study_flow.config's shape); empty: no flow."""
        try:
            return clean_flow(self.cleaned_data.get("study_flow") or {})
        except FlowRefused as refused:
            raise forms.ValidationError(str(refused)) from refused

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
        for field, message in self._redundancy_errors(cleaned).items():
            if field not in self.errors:
                self.add_error(field, message)
        return cleaned

    @staticmethod
    def _redundancy_errors(cleaned: dict) -> dict[str, str]:
        policy = cleaned.get("redundancy_policy") or FIXED
        errors = redundancy.setting_errors(
            policy, cleaned.get("redundancy_cap"), cleaned.get("model_threshold"), cleaned.get("posterior_below")
        )
        items, mark = (cleaned.get(name) or Campaign._meta.get_field(name).default for name in QUALIFICATION_FIELDS)
        return errors | qualification.setting_errors(items, mark)

    def campaign_settings(self) -> dict:
        """The campaign's fields for `create_campaign`, beside its name and label set."""
        chosen = {name: self.cleaned_data[name] for name in self.Meta.fields if name not in ("name", "labels")}
        return {name: value for name, value in chosen.items() if not (name in self.OPTIONAL and value in ("", None))}

    def selected_dialogues(self, language: str | None = None) -> QuerySet[Dialogue]:
        candidates = candidate_dialogues(language)
        if self.cleaned_data["selection"] == RECENT:
            return candidates[: self.cleaned_data["dialogue_count"]]
        return candidates


class PairwiseCampaignForm(forms.Form):
    """A pairwise (ACUTE-Eval) campaign: two sources, or a CSV of pairs, and the questions' wording."""

    MAX_CSV_BYTES = 2 * 1024 * 1024

    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    language = forms.CharField(max_length=8, initial="en", help_text="only dialogues in this language (ISO 639)")
    source_a = forms.CharField(
        max_length=200,
        required=False,
        help_text="subtitles, movie:<id>, source:<name> (e.g. source:botstalk), model:<id> or ids:<id>,<id>,...",
    )
    source_b = forms.CharField(max_length=200, required=False, help_text="the source to compare against, same forms")
    count = forms.IntegerField(min_value=1, max_value=10_000, initial=100, help_text="pairs drawn from the two sources")
    pairs_csv = forms.FileField(
        required=False, help_text="instead of two sources: one `dialogue_a,dialogue_b` pair of ids per line"
    )
    seed = forms.IntegerField(initial=0, help_text="draws the pairs, the left/right sides and the quiz items")
    dialogues_per_hit = forms.IntegerField(min_value=1, max_value=100, initial=10, label="Pairs per HIT")
    quiz_per_hit = forms.IntegerField(
        min_value=0, max_value=20, initial=2, help_text="quiz pairs per HIT (one side degenerate)"
    )
    workers_per_hit = forms.IntegerField(min_value=1, max_value=20, initial=3)
    reward = forms.DecimalField(min_value=0, max_digits=8, decimal_places=2, initial="0.40")
    bonus = forms.DecimalField(min_value=0, max_digits=8, decimal_places=2, initial="0.10")
    quiz_pass_mark = forms.IntegerField(min_value=0, max_value=20, initial=2)
    time_limit_minutes = forms.IntegerField(min_value=1, initial=60)

    def __init__(self, *args, **kwargs) -> None:
        from labeling.task_types.pairwise import DEFAULT_QUESTIONS

        super().__init__(*args, **kwargs)
        self.question_defaults = DEFAULT_QUESTIONS
        for question in DEFAULT_QUESTIONS:
            self.fields[f"wording_{question['key']}"] = forms.CharField(
                label=f"{question['title']} wording",
                initial=question["wording"],
                max_length=500,
                widget=forms.Textarea(attrs={"rows": 2}),
            )

    def clean_language(self) -> str:
        code = (self.cleaned_data.get("language") or "en").strip().lower()
        if not re.fullmatch(r"[a-z]{2,3}", code):
            raise forms.ValidationError("an ISO 639 language code such as en, pt or deu")
        return code

    def clean_pairs_csv(self) -> str:
        upload = self.cleaned_data.get("pairs_csv")
        if not upload:
            return ""
        if upload.size > self.MAX_CSV_BYTES:
            raise forms.ValidationError(f"{upload.name}: larger than {self.MAX_CSV_BYTES // 1024} KiB")
        try:
            return upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise forms.ValidationError(f"{upload.name}: not UTF-8 text (byte {error.start})") from error

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("pairs_csv") and not (cleaned.get("source_a") and cleaned.get("source_b")):
            self.add_error("source_b", "give two sources, or upload a CSV of pairs")
        return cleaned

    def campaign_arguments(self) -> dict:
        """The keyword arguments of labeling.services.campaigns.create_pairwise_campaign."""
        data = self.cleaned_data
        upload = self.files.get("pairs_csv")
        settings = ("description", "language", "dialogues_per_hit", "quiz_per_hit", "workers_per_hit", "reward")
        settings += ("bonus", "quiz_pass_mark", "time_limit_minutes")
        return {
            "source_a": data["source_a"],
            "source_b": data["source_b"],
            "pairs_csv": data["pairs_csv"],
            "csv_name": upload.name if upload else "pairs.csv",
            "count": data["count"],
            "seed": data["seed"],
            "questions": [
                {**question, "wording": data[f"wording_{question['key']}"]} for question in self.question_defaults
            ],
            **{name: data[name] for name in settings},
        }
