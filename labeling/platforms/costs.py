"""What publishing a campaign will cost, before anything is published. Pure: no Django import.

Rewards for every seat, expected bonuses (the share of workers expected to reach the bonus mark,
1.0 plans for all of them), and the platform's fee on both at the configured rate.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
SYMBOLS = {"USD": "$", "GBP": "£", "EUR": "€"}


def money(amount: Decimal | int | float | str | None, currency: str) -> str:
    """An amount as money: two decimals and the currency's sign ("$1.40", "£0.05", "12.00 CHF")."""
    value = Decimal(str(amount or 0)).quantize(CENT, rounding=ROUND_HALF_UP)
    sign, value = ("-", -value) if value < 0 else ("", value)
    symbol = SYMBOLS.get(currency)
    return f"{sign}{symbol}{value:,}" if symbol else f"{sign}{value:,} {currency}"


@dataclass(frozen=True)
class CostPreview:
    currency: str
    seats: int
    reward_each: Decimal
    bonus_each: Decimal
    bonus_share: Decimal
    fee_rate: Decimal
    rewards: Decimal
    expected_bonuses: Decimal
    fees: Decimal

    @property
    def total(self) -> Decimal:
        return self.rewards + self.expected_bonuses + self.fees

    def lines(self) -> list[tuple[str, str]]:
        """(what, amount as money) rows for a page."""
        share = f"{self.bonus_share * 100:.0f} %"
        return [
            (f"Rewards: {self.seats} × {money(self.reward_each, self.currency)}", money(self.rewards, self.currency)),
            (
                f"Expected bonuses: {share} of {self.seats} × {money(self.bonus_each, self.currency)}",
                money(self.expected_bonuses, self.currency),
            ),
            (f"Platform fees: {self.fee_rate * 100:.1f} % of rewards and bonuses", money(self.fees, self.currency)),
            ("Total", money(self.total, self.currency)),
        ]


def cost_preview(
    *, seats: int, reward: Decimal, bonus: Decimal, bonus_share: Decimal, fee_rate: Decimal, currency: str
) -> CostPreview:
    if seats < 0 or reward < 0 or bonus < 0 or not 0 <= bonus_share <= 1 or fee_rate < 0:
        raise ValueError("seats, reward, bonus and fee rate must not be negative; bonus share within 0..1")
    rewards = (reward * seats).quantize(CENT, rounding=ROUND_HALF_UP)
    bonuses = (bonus * seats * bonus_share).quantize(CENT, rounding=ROUND_HALF_UP)
    fees = ((rewards + bonuses) * fee_rate).quantize(CENT, rounding=ROUND_HALF_UP)
    return CostPreview(currency, seats, reward, bonus, bonus_share, fee_rate, rewards, bonuses, fees)
