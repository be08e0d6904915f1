"""Fixtures a test names on itself when it needs a quiz setting other than the shipped one.

Nothing here is autouse: every test runs the product's settings unless it says otherwise.
"""

import pytest


@pytest.fixture
def quiz_demo_bank(settings):
    """For a test that builds HITs with quiz screens from the built-in one-turn quiz bank (public
    answers: the product keeps it off, QUIZ_DEMO_BANK=0). Name it on the test or the module:
    `pytestmark = pytest.mark.usefixtures("quiz_demo_bank")`."""
    settings.QUIZ_DEMO_BANK = True
