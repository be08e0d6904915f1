"""What the labeling API reads and writes."""

from rest_framework import serializers

from annotation.models import Dialogue, Label
from labeling.crowd.qualification import setting_errors as qualification_setting_errors
from labeling.crowd.redundancy import FIXED, setting_errors
from labeling.models import AggregatedLabel, Campaign
from labeling.study_flow.config import FlowRefused, clean_flow

QUALIFICATION_FIELDS = ("qualification_items", "qualification_mark")


class CampaignSerializer(serializers.ModelSerializer):
    labels = serializers.SlugRelatedField(
        slug_field="name", many=True, queryset=Label.objects.filter(is_active=True), required=False
    )
    hit_count = serializers.SerializerMethodField()
    # a plain string, not an enum: "status" enums of other components would collide in the schema
    status = serializers.CharField(read_only=True, help_text="draft, open, paused or closed")
    dialogue_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        write_only=True,
        required=False,
        help_text="dialogues to bundle into HITs, in this order",
    )
    recent_dialogues = serializers.IntegerField(
        min_value=1,
        write_only=True,
        required=False,
        help_text="or: the N most recent dialogues without a crowd label that are in no HIT yet",
    )

    class Meta:
        model = Campaign
        fields = [
            "id", "name", "description", "labels", "status", "dialogues_per_hit", "quiz_per_hit",
            "workers_per_hit", "reward", "bonus", "quiz_pass_mark", "time_limit_minutes", "estimated_minutes",
            "fallback_choices", "tie_breaking", "tie_break_workers", "redundancy_policy", "redundancy_cap",
            "model_threshold", "posterior_below", "qualification_required", "qualification_items",
            "qualification_mark", "qualification_reward", "language", "currency", "approval_quiz_mark", "below_mark",
            "created_at", "hit_count", "dialogue_ids", "recent_dialogues", "task_type", "task_config",
            "suggestion_model", "study_flow",
        ]  # fmt: skip
        read_only_fields = ["id", "status", "created_at", "hit_count", "task_type", "task_config", "suggestion_model"]

    def get_hit_count(self, campaign: Campaign) -> int:
        return campaign.hits.count()

    def validate_study_flow(self, raw) -> dict:
        """Consent, instructions, practice, survey and their translations (docs/crowd/study-flow.md)."""
        try:
            return clean_flow(raw)
        except FlowRefused as refused:
            raise serializers.ValidationError(str(refused)) from refused

    def validate_fallback_choices(self, names) -> list[str]:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise serializers.ValidationError("a list of three label names")
        known = Label.objects.filter(is_active=True).by_names(names)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise serializers.ValidationError(f"not labels: {', '.join(unknown)}")
        resolved = [known[n].name for n in names]
        if resolved and len(set(resolved)) != 3:
            raise serializers.ValidationError("give exactly three different labels")
        return resolved

    def validate(self, data):
        data = super().validate(data)
        current = self.instance

        def value(name, default=None):
            return data[name] if name in data else getattr(current, name, default)

        errors = setting_errors(
            value("redundancy_policy", FIXED),
            value("redundancy_cap"),
            value("model_threshold"),
            value("posterior_below"),
        )
        items, mark = (value(name, Campaign._meta.get_field(name).default) for name in QUALIFICATION_FIELDS)
        errors |= qualification_setting_errors(items, mark)
        if errors:
            raise serializers.ValidationError(errors)
        return data

    def validate_dialogue_ids(self, ids: list[int]) -> list[int]:
        found = set(Dialogue.objects.filter(pk__in=ids).values_list("pk", flat=True))
        missing = [pk for pk in ids if pk not in found]
        if missing:
            raise serializers.ValidationError(f"no such dialogue: {missing[:10]}")
        return ids


class AggregatedLabelSerializer(serializers.ModelSerializer):
    label = serializers.SlugRelatedField(slug_field="name", read_only=True)
    turn_text = serializers.CharField(source="turn.text", read_only=True)

    class Meta:
        model = AggregatedLabel
        fields = [
            "id", "dialogue", "turn", "turn_text", "label", "label_text", "status", "votes", "answer_count",
            "agreement", "dawid_skene_label", "dawid_skene_confidence", "updated_at",
        ]  # fmt: skip


class WorkerStatsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    worker = serializers.CharField()
    platform = serializers.CharField()
    status = serializers.CharField()
    hits = serializers.IntegerField()
    quiz_mark = serializers.FloatField(allow_null=True)
    quiz_accuracy = serializers.FloatField(allow_null=True)
    agreement_with_majority = serializers.FloatField(allow_null=True)
    agreement_with_dawid_skene = serializers.FloatField(allow_null=True)
    seconds_per_hit = serializers.FloatField(allow_null=True)
    median_seconds = serializers.FloatField(allow_null=True)
    too_fast = serializers.BooleanField()


class CampaignProgressSerializer(serializers.Serializer):
    """How far the campaign is (labeling.reports.campaign._progress): the seats bought and what became of them."""

    hits = serializers.IntegerField()
    tiebreak_hits = serializers.IntegerField()
    assignments_needed = serializers.IntegerField()
    assignments_submitted = serializers.IntegerField()
    assignments_pending = serializers.IntegerField(help_text="submitted on a platform, not confirmed by it yet")
    assignments_in_progress = serializers.IntegerField()
    assignments_rejected = serializers.IntegerField()
    completion = serializers.FloatField(allow_null=True, help_text="submitted / needed, 0 to 1")


class CampaignReportSerializer(serializers.Serializer):
    """The dashboard's figures (see labeling.reports.campaign.campaign_report)."""

    campaign = serializers.DictField()
    progress = CampaignProgressSerializer()
    agreement = serializers.DictField()
    labels = serializers.ListField(child=serializers.DictField())
    workers = WorkerStatsSerializer(many=True)
    other_answers = serializers.DictField()
    anchoring = serializers.DictField()
    payments_due = serializers.DictField()


class Table4Serializer(serializers.Serializer):
    """The EDOS paper's Table 4 shape (labeling.reports.study.figures.Table4)."""

    dialogues = serializers.IntegerField()
    majority = serializers.IntegerField()
    majority_share = serializers.FloatField(allow_null=True)
    majority_gold = serializers.IntegerField()
    fleiss_kappa = serializers.FloatField(allow_null=True)
    quiz_workers = serializers.IntegerField()
    quiz_bonus_share = serializers.FloatField(allow_null=True)
    quiz_bonus_mark = serializers.IntegerField()
    typed_dialogues = serializers.IntegerField()


class StudyReportSerializer(serializers.Serializer):
    """The study report (labeling.reports.study; the page's JSON download)."""

    campaign = serializers.DictField()
    table4 = Table4Serializer()
    agreement = serializers.DictField(help_text="items, resamples, seed, confidence, overall and per_label intervals")
    crowd = serializers.DictField()
    model_raters = serializers.ListField(child=serializers.DictField())


class PublishSerializer(serializers.Serializer):
    platform = serializers.ChoiceField(choices=["local", "mturk", "prolific"], default="local")


class CampaignStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Campaign.STATUS_CHOICES)


class JobQueuedSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    status = serializers.CharField()


class ApprovedSerializer(serializers.Serializer):
    approved = serializers.IntegerField()


class PaymentsRecordedSerializer(serializers.Serializer):
    approved = serializers.IntegerField()
    new_entries = serializers.IntegerField()


class WorkerStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    blocked = serializers.BooleanField(help_text="true blocks the worker (no more HITs), false unblocks")
    reason = serializers.CharField(
        required=False, allow_blank=True, max_length=1000, write_only=True, help_text="kept in the audit log"
    )
    status = serializers.CharField(read_only=True, help_text="active or blocked")


class AcceptLabelSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=64)


class LabelSerializer(serializers.ModelSerializer):
    class Meta:
        model = Label
        fields = ["id", "name", "kind"]


class PairwiseQuestionSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=32)
    title = serializers.CharField(max_length=80, required=False)
    wording = serializers.CharField(max_length=500)


class PairwiseCampaignSerializer(serializers.Serializer):
    """A pairwise (ACUTE-Eval) campaign: two sources, or the text of a CSV of pairs."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    language = serializers.RegexField(r"^[a-z]{2,3}$", required=False, default="en")
    source_a = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    source_b = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    pairs_csv = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="dialogue_a,dialogue_b per line", max_length=2_000_000
    )
    count = serializers.IntegerField(min_value=1, max_value=10_000, default=100)
    seed = serializers.IntegerField(default=0)
    questions = PairwiseQuestionSerializer(many=True, required=False, help_text="default: ACUTE-Eval's three")
    dialogues_per_hit = serializers.IntegerField(min_value=1, max_value=100, default=10)
    quiz_per_hit = serializers.IntegerField(min_value=0, max_value=20, default=2)
    workers_per_hit = serializers.IntegerField(min_value=1, max_value=20, default=3)
    quiz_pass_mark = serializers.IntegerField(min_value=0, max_value=20, default=2)

    def validate(self, data):
        if not data["pairs_csv"] and not (data["source_a"] and data["source_b"]):
            raise serializers.ValidationError({"source_b": ["give two sources, or pairs_csv"]})
        return data
