"""The `money` template filter: an amount in its campaign's currency, `{{ campaign.reward|money:campaign.currency }}`
("£1.20", "€1.20", "$1.20", "1.20 CHF"). Every page that shows a reward, a bonus or a payment formats
it through labeling.platforms.costs.money, so no page writes a currency sign of its own."""

from django import template

from labeling.platforms.costs import money as _money

register = template.Library()


@register.filter
def money(amount, currency: str) -> str:
    return _money(amount, currency)
