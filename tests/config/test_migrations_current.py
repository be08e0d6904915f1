"""No model change waits for a migration: a model default that drifts (a paper number among them,
annotation/papers.py) fails here instead of silently differing from the database's."""

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_it_refuses_a_model_change_without_its_migration():
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=StringIO())
    except SystemExit as exit_:  # --check exits 1 when a migration is missing
        pytest.fail(f"models differ from their migrations (exit {exit_.code}):\n{out.getvalue()}")
