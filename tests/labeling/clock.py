"""A clock the test moves forward: the server bounds a screen's seconds by its own timestamps
(labeling.actions.answer._bounded_seconds), so a test that posts "5 seconds" lets 5 seconds pass first."""

from datetime import timedelta

import pytest
from django.utils import timezone


class Clock:
    def __init__(self, monkeypatch, *, frozen: bool = False) -> None:
        self.offset = timedelta(0)
        real_now = timezone.now
        start = real_now()
        if frozen:  # only `advance` moves it: two requests compared see the same seconds pass
            monkeypatch.setattr(timezone, "now", lambda: start + self.offset)
        else:
            monkeypatch.setattr(timezone, "now", lambda: real_now() + self.offset)

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """django.utils.timezone.now, `advance`d by hand (every `timezone.now()` and auto_now sees it)."""
    return Clock(monkeypatch)


@pytest.fixture
def frozen_clock(monkeypatch) -> Clock:
    """A clock that stands still but for `advance`: a test comparing the seconds two paths store
    sees no real time pass between their requests (a loaded machine took 0.7 s between two)."""
    return Clock(monkeypatch, frozen=True)
