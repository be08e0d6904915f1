"""A clock the test moves forward: the server bounds a screen's seconds by its own timestamps
(labeling.actions.answer._bounded_seconds), so a test that posts "5 seconds" lets 5 seconds pass first."""

from datetime import timedelta

import pytest
from django.utils import timezone


class Clock:
    def __init__(self, monkeypatch) -> None:
        self.offset = timedelta(0)
        real_now = timezone.now
        monkeypatch.setattr(timezone, "now", lambda: real_now() + self.offset)

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """django.utils.timezone.now, `advance`d by hand (every `timezone.now()` and auto_now sees it)."""
    return Clock(monkeypatch)
