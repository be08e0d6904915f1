"""What publishing a campaign will cost, before anything is published. Pure: no Django import.

Rewards for every seat, expected bonuses (the share of workers expected to reach the bonus mark,
1.0 plans for all of them), and the platform's fee on both at the configured rate. Beside the cost,
the hourly rate the reward pays at the estimated minutes per HIT (and, once HITs were done, at
their measured median): below the platform's minimum it is a refusal, and nothing is published.
"""

from dataclasses import dataclass, field
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
    pay: "HourlyPay | None" = None
    refusals: tuple[str, ...] = field(default=())
    quiz_seats: int = 0  # the qualification quiz's places, paid their own reward
    quiz_reward_each: Decimal = Decimal(0)
    quiz_rewards: Decimal = Decimal(0)
    vat_rate: Decimal = Decimal(0)  # on the platform's fees (Prolific: where applicable)
    vat: Decimal = Decimal(0)
    fee_note: str = ""  # how the fees were reckoned, when not one rate on everything

    @property
    def total(self) -> Decimal:
        return self.rewards + self.quiz_rewards + self.expected_bonuses + self.fees + self.vat

    def lines(self) -> list[tuple[str, str]]:
        """(what, amount as money) rows for a page."""
        share = f"{self.bonus_share * 100:.0f} %"
        rows = [
            (f"Rewards: {self.seats} × {money(self.reward_each, self.currency)}", money(self.rewards, self.currency))
        ]
        if self.quiz_seats:
            rows.append(
                (
                    f"Qualification quiz: {self.quiz_seats} × {money(self.quiz_reward_each, self.currency)}",
                    money(self.quiz_rewards, self.currency),
                )
            )
        rows += [
            (
                f"Expected bonuses: {share} of {self.seats} × {money(self.bonus_each, self.currency)}",
                money(self.expected_bonuses, self.currency),
            ),
            (
                self.fee_note or f"Platform fees: {self.fee_rate * 100:.1f} % of rewards and bonuses",
                money(self.fees, self.currency),
            ),
        ]
        if self.vat_rate:
            rows.append((f"VAT: {self.vat_rate * 100:.0f} % of the fees", money(self.vat, self.currency)))
        return rows + [("Total", money(self.total, self.currency))] + (self.pay.lines() if self.pay else [])


def cost_preview(
    *,
    seats: int,
    reward: Decimal,
    bonus: Decimal,
    bonus_share: Decimal,
    fee_rate: Decimal,
    currency: str,
    quiz_seats: int = 0,
    quiz_reward: Decimal = Decimal(0),
    reward_fees: Decimal | None = None,
    vat_rate: Decimal = Decimal(0),
    fee_note: str = "",
) -> CostPreview:
    """Rewards (and the quiz's), expected bonuses, fees and VAT on the fees. `fee_rate` applies to
    rewards and bonuses unless `reward_fees` gives the rewards' fees already reckoned (MTurk's
    depend on each HIT's assignments)."""
    if min(seats, quiz_seats, reward, bonus, quiz_reward, fee_rate, vat_rate) < 0 or not 0 <= bonus_share <= 1:
        raise ValueError("seats, reward, bonus and fee rate must not be negative; bonus share within 0..1")
    rewards = _cents(reward * seats)
    quiz_rewards = _cents(quiz_reward * quiz_seats)
    bonuses = _cents(bonus * seats * bonus_share)
    if reward_fees is None:
        fees = _cents((rewards + quiz_rewards + bonuses) * fee_rate)
    else:
        fees = _cents(reward_fees + bonuses * fee_rate)
    vat = _cents(fees * vat_rate)
    return CostPreview(
        currency, seats, reward, bonus, bonus_share, fee_rate, rewards, bonuses, fees,
        quiz_seats=quiz_seats, quiz_reward_each=quiz_reward, quiz_rewards=quiz_rewards,
        vat_rate=vat_rate, vat=vat, fee_note=fee_note,
    )  # fmt: skip


def _cents(amount: Decimal) -> Decimal:
    return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class HourlyPay:
    """The reward per hour at the estimated minutes per HIT and, when known, at the measured median."""

    currency: str
    reward: Decimal
    estimated_minutes: int
    minimum: Decimal | None  # the platform's minimum hourly rate (None: none configured)
    measured_minutes: Decimal | None = None

    @property
    def estimated_rate(self) -> Decimal:
        return hourly_rate(self.reward, self.estimated_minutes)

    @property
    def measured_rate(self) -> Decimal | None:
        if self.measured_minutes is None or self.measured_minutes <= 0:
            return None  # nothing measured yet (a zero would be an infinite rate, not a check)
        return hourly_rate(self.reward, self.measured_minutes)

    def lines(self) -> list[tuple[str, str]]:
        rows = [
            (f"Hourly rate at the estimated {self.estimated_minutes} min per HIT", self._per_hour(self.estimated_rate))
        ]
        if self.measured_rate is not None:
            rows.append(
                (
                    f"Hourly rate at the measured median {self.measured_minutes:.1f} min per HIT",
                    self._per_hour(self.measured_rate),
                )
            )
        if self.minimum is not None:
            rows.append(("Platform minimum", self._per_hour(self.minimum)))
        return rows

    def refusals(self, platform: str, setting: str) -> list[str]:
        """Why publishing is refused: a rate below the minimum, named with the rate and the setting."""
        if self.minimum is None:
            return []
        found = [("estimated", self.estimated_minutes, self.estimated_rate)]
        if self.measured_rate is not None:
            found.append(("measured median", self.measured_minutes, self.measured_rate))
        return [
            f"the reward of {money(self.reward, self.currency)} per HIT pays {self._per_hour(rate)} at the "
            f"{what} {minutes:.1f} min per HIT, below {platform}'s minimum of {self._per_hour(self.minimum)} "
            f"({setting}); raise the reward or correct the estimated minutes"
            for what, minutes, rate in found
            if rate < self.minimum
        ]

    def _per_hour(self, rate: Decimal) -> str:
        return f"{money(rate, self.currency)}/h"


def hourly_rate(reward: Decimal, minutes: Decimal | int) -> Decimal:
    """What `reward` per HIT pays an hour when one HIT takes `minutes`."""
    if Decimal(minutes) <= 0:
        raise ValueError("minutes per HIT must be positive")
    return (Decimal(reward) * 60 / Decimal(minutes)).quantize(CENT, rounding=ROUND_HALF_UP)
