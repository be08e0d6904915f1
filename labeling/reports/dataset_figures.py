"""The crowd figures a dataset card states per campaign (annotation.export.card.register_figures
names `card_figures`, labeling.apps), taken from the study report's own computation
(labeling.reports.study.build_report) so the card and the report never differ: items, majority
(answers as given, Table 4's rule, and with typed labels matched), Fleiss' kappa, Gwet's AC1 and
the categories it counts, raters, answers, adjudicated items, and the campaign's provenance (run
here, or imported from a named format with the source's licence and citation)."""

from collections.abc import Sequence

from django.conf import settings

from labeling.models import Campaign
from labeling.reports.study import build_report


def card_figures(campaign_ids: Sequence[int]) -> list[dict]:
    return [campaign_figures(campaign) for campaign in Campaign.objects.filter(pk__in=campaign_ids).order_by("pk")]


def campaign_figures(campaign: Campaign) -> dict:
    # the page's resamples and seed, so the card's intervals are the page's too
    report = build_report(campaign, resamples=settings.STUDY_REPORT_RESAMPLES)
    data = report.as_dict()
    t4, overall, provenance = data["table4"], data["agreement"]["overall"], data["provenance"]
    kappa, ac1 = report.agreement.overall["fleiss_kappa"], report.agreement.overall["gwet_ac1"]  # unrounded
    return {
        "campaign": campaign.pk,
        "name": campaign.name,
        "items": t4["dialogues"],
        "majority": t4["majority"],
        "majority_share": t4["majority_share"],
        "majority_gold": t4["majority_gold"],
        "agreement_items": t4["agreement_items"],
        "categories": t4["categories"],
        "fleiss_kappa": kappa.value,
        "fleiss_kappa_interval": [overall["fleiss_kappa"]["low"], overall["fleiss_kappa"]["high"]],
        "gwet_ac1": ac1.value,
        "gwet_ac1_interval": [overall["gwet_ac1"]["low"], overall["gwet_ac1"]["high"]],
        "workers": data["crowd"]["workers"],
        "answers": t4["answers"],
        "adjudicated": provenance["adjudicated"],
        "provenance": provenance["kind"],
        "imported": provenance["imported"],
        "source_format": provenance["source_format"],
        "license": provenance["license"],
        "license_name": provenance["license_name"],
        "citation": provenance["citation"],
        "hits": provenance["hits"],
        "quiz_answers": provenance["quiz_answers"],
    }
