"""Settings that carry a paper's number default to it (annotation/papers.py), and the example
environment file lists the same value."""

import re

from annotation.papers import DIALOGUE_GAP_SECONDS
from tests.config.test_settings import _import_settings
from tests.conftest import REPO_ROOT


def test_the_dialogue_gap_setting_defaults_to_the_papers_5_seconds():
    code = "import config.settings as s; print(s.DIALOGUE_GAP_SECONDS)"
    result = _import_settings(code, DEBUG="1", DIALOGUE_GAP_SECONDS="")
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == 5.0 == DIALOGUE_GAP_SECONDS


def test_the_example_environment_lists_the_papers_gap():
    example = (REPO_ROOT / ".env.example").read_text()
    (value,) = re.findall(r"^DIALOGUE_GAP_SECONDS=(.*)$", example, re.MULTILINE)
    assert float(value) == DIALOGUE_GAP_SECONDS
