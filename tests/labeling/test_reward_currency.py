"""A reward shows its own campaign's currency wherever a participant sees it: the annotator's home
page (with the fast path on and off), through the one formatting helper (the `money` filter over
labeling.platforms.costs.money, which the platform preview and the payments pages use too)."""

import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.template import Context, Template
from django.urls import reverse

from tests.labeling.hit_factory import open_campaign

pytestmark = pytest.mark.django_db

SHOWN = {"GBP": "£1.20 + £0.35 quiz bonus", "EUR": "€1.20 + €0.35 quiz bonus", "USD": "$1.20 + $0.35 quiz bonus"}


@pytest.fixture
def campaigns():
    return {
        currency: open_campaign(name=f"Shift in {currency}", currency=currency, reward=Decimal("1.20"), bonus="0.35")
        for currency in SHOWN
    }


def reward_cell(page: str, campaign) -> str:
    return re.search(rf'<td class="num" id="reward-{campaign.pk}">(.*?)</td>', page).group(1)


@pytest.mark.parametrize("fast_path", [True, False])
def test_the_home_page_shows_each_reward_in_its_campaigns_currency(client, annotators, campaigns, settings, fast_path):
    settings.ANNOTATOR_FAST_PATH = fast_path
    client.force_login(annotators[0])
    page = client.get(reverse("labeling:worker_home")).content.decode()
    for currency, campaign in campaigns.items():
        assert reward_cell(page, campaign) == SHOWN[currency]


def test_the_money_filter_names_a_currency_without_a_sign_by_its_code():
    shown = Template("{% load money %}{{ amount|money:currency }}").render(
        Context({"amount": "1.2", "currency": "CHF"})
    )
    assert shown == "1.20 CHF"


def test_no_template_writes_a_dollar_sign_of_its_own_before_a_value():
    for template in (Path(__file__).resolve().parents[2] / "templates").rglob("*.html"):
        assert not re.search(r"\$\{\{", template.read_text()), template
