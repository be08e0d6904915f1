"""The `label_in` template filter: a label's name as a participant's pages show it, in the active
language where the campaign's researcher gave a version of it (Campaign.study_flow's translations),
else as it is: `{{ gold|label_in:assignment.hit.campaign }}`. For the pages a participant sees once
per HIT (the quiz check, the review, the quiz feedback); the work screens build theirs once per
process and language (labeling/task_types/last_turn_label/screen.py). A name with no version, or a
typed new label, is shown as it is; the template escapes it either way."""

from django import template
from django.utils.translation import get_language

from labeling.work import label_texts as texts

register = template.Library()


@register.filter
def label_in(name, campaign) -> str:
    if not name or campaign is None:
        return name
    return texts.label_shown(texts.labels_in(campaign.study_flow or {}, get_language()), name)
