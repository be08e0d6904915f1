"""config/dotenv.py: the one way `.env` is read (manage.py, the Procfile's processes, compose)."""

import os

import pytest

from config.dotenv import EnvFileError, load_env_file, read_env_file
from tests.conftest import REPO_ROOT


def test_it_reads_name_value_lines_comments_blanks_and_quotes(tmp_path):
    path = tmp_path / ".env"
    path.write_text("# a comment\n\nDEBUG=1\nSECRET_KEY='abc=def'\nEMPTY=\n  SPACED = a b \nDEBUG=0\n")
    assert read_env_file(path) == {"DEBUG": "0", "SECRET_KEY": "abc=def", "EMPTY": "", "SPACED": "a b"}


def test_a_line_that_is_not_name_value_names_its_line(tmp_path):
    path = tmp_path / ".env"
    path.write_text("DEBUG=1\nexport SECRET_KEY\n")
    with pytest.raises(EnvFileError, match=r"\.env: line 2: expected NAME=value"):
        read_env_file(path)


def test_the_environment_wins_over_the_file(tmp_path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("DOTENV_TEST_SET=from-file\nDOTENV_TEST_NEW=from-file\n")
    monkeypatch.setenv("DOTENV_TEST_SET", "from-shell")
    monkeypatch.delenv("DOTENV_TEST_NEW", raising=False)
    try:
        assert load_env_file(path) == ["DOTENV_TEST_NEW"]
        assert os.environ["DOTENV_TEST_SET"] == "from-shell"
        assert os.environ["DOTENV_TEST_NEW"] == "from-file"
    finally:
        os.environ.pop("DOTENV_TEST_NEW", None)


def test_no_file_sets_nothing(tmp_path):
    assert load_env_file(tmp_path / "absent.env") == []


def test_env_example_reads_the_same_here_and_in_honcho():
    """honcho (the Procfile's runner) parses with shlex, which drops spaces; every value of
    .env.example means the same to both (the one with spaces, MTURK_KEYWORDS, is a comma list either way)."""
    from honcho.environ import parse

    ours = read_env_file(REPO_ROOT / ".env.example")
    honchos = parse((REPO_ROOT / ".env.example").read_text())
    assert {name: value.replace(" ", "") for name, value in ours.items() if value} == honchos


def test_the_entry_points_read_env_and_settings_do_not():
    """Settings never read .env, so the suite runs the shipped defaults whatever a developer keeps there."""
    assert "load_env_file()" in (REPO_ROOT / "manage.py").read_text()
    assert "load_env_file()" in (REPO_ROOT / "config" / "beat.py").read_text()
    assert "dotenv" not in (REPO_ROOT / "config" / "settings.py").read_text()
    procfile = (REPO_ROOT / "Procfile").read_text()
    assert "celery -A config beat" not in procfile and "python -m config.beat" in procfile
    assert "honcho start --env /dev/null" in (REPO_ROOT / "Makefile").read_text()


def test_env_file_names_another_file_or_none(tmp_path, monkeypatch):
    other = tmp_path / "staging.env"
    other.write_text("DOTENV_TEST_OTHER=staging\n")
    monkeypatch.delenv("DOTENV_TEST_OTHER", raising=False)
    monkeypatch.setenv("ENV_FILE", "")
    assert load_env_file() == []  # the suite's own setting: no file at all
    monkeypatch.setenv("ENV_FILE", str(other))
    try:
        assert load_env_file() == ["DOTENV_TEST_OTHER"] and os.environ["DOTENV_TEST_OTHER"] == "staging"
    finally:
        os.environ.pop("DOTENV_TEST_OTHER", None)


def test_the_suite_reads_no_env_file():
    assert os.environ.get("ENV_FILE") == ""
