"""Settings come from the environment and refuse bad values at start-up."""

import os
import subprocess
import sys

import pytest

from config import env
from tests.conftest import REPO_ROOT


def _import_settings(code: str = "import config.settings", **overrides: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL"}}
    environment.update(overrides)
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off():
    result = _import_settings(DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is required" in result.stderr


def test_it_starts_without_a_secret_key_in_debug():
    assert _import_settings(DEBUG="1").returncode == 0


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG='maybe' is not a boolean"),
        ("DATABASE_URL", "mysql://x/y", "DATABASE_URL='mysql://x/y' must start with"),
        ("CELERY_BROKER_URL", "localhost:6379", "CELERY_BROKER_URL='localhost:6379' must start with"),
        ("DIALOGUE_GAP_SECONDS", "five", "DIALOGUE_GAP_SECONDS='five' is not a number"),
        ("DIALOGUE_GAP_SECONDS", "-1", "must be positive"),
        ("ML_DEVICE", "tpu", "ML_DEVICE='tpu' must be one of"),
        ("ML_PRECISION", "int4", "ML_PRECISION='int4' must be one of auto, fp32, bf16, fp16, int8"),
        ("DB_CONN_MAX_AGE", "soon", "DB_CONN_MAX_AGE='soon' is not an integer"),
        ("INGEST_DISABLED_RULES", "advert,typo_rule", "unknown rule(s) typo_rule"),
    ],
)
def test_it_fails_loudly_on_a_bad_value(name, value, message):
    result = _import_settings(SECRET_KEY="x", **{name: value})
    assert result.returncode != 0
    assert message in result.stderr


def test_ml_precision_accepts_int8_in_any_case():
    result = _import_settings("import config.settings as s; print(s.ML_PRECISION)", SECRET_KEY="x", ML_PRECISION="INT8")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "int8"


def test_env_helpers_read_typed_values(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    monkeypatch.setenv("RATE", "0.25")
    assert env.env_bool("FLAG") is True
    assert env.env_list("HOSTS", []) == ["a.example", "b.example"]
    assert env.env_float("RATE", 1.0) == 0.25
    assert env.env_int("MISSING_INT", 7) == 7


def test_without_a_broker_jobs_go_to_the_embedded_broker_never_in_process():
    code = (
        "import config.settings as s; print(s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_TASK_ACKS_LATE,"
        " s.CELERY_BROKER_TRANSPORT_OPTIONS['data_folder_in'], hasattr(s, 'CELERY_TASK_ROUTES'))"
    )
    result = _import_settings(code, SECRET_KEY="x", CELERY_BROKER_URL="", BROKER_DIR="/tmp/some-broker")
    assert result.stdout.split() == ["filesystem://", "False", "True", "/tmp/some-broker/messages", "False"]
    with_redis = _import_settings(code.split(";")[0] + "; print(s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER)",
                                  SECRET_KEY="x", CELERY_BROKER_URL="redis://127.0.0.1:6379/0")  # fmt: skip
    assert with_redis.stdout.split() == ["redis://127.0.0.1:6379/0", "False"]


def test_the_embedded_broker_keeps_a_folder_per_database(tmp_path):
    """Two demos from one checkout (two SQLite files) must not share a job queue: each would take
    the other's jobs and run them on the wrong database."""
    code = "import config.settings as s; print(s.BROKER_DIR)"

    def folder(database_url: str, broker_dir: str = "") -> str:
        result = _import_settings(code, SECRET_KEY="x", CELERY_BROKER_URL="", BROKER_DIR=broker_dir,
                                  DATABASE_URL=database_url)  # fmt: skip
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    first, second = f"sqlite:///{tmp_path}/one.sqlite3", f"sqlite:///{tmp_path}/two.sqlite3"
    assert folder(first) == folder(first) != folder(second)
    assert folder(first).startswith(str(REPO_ROOT / "var" / "broker" / "one-"))
    assert folder("postgres://postgres@127.0.0.1:5432/test") != folder("postgres://postgres@127.0.0.1:5432/other")
    assert folder(first, broker_dir="/tmp/chosen-broker") == "/tmp/chosen-broker"  # a folder given wins


@pytest.mark.parametrize(("name", "value"), [("JOB_STALE_SECONDS", "5"), ("JOB_MAX_ATTEMPTS", "0")])
def test_job_recovery_settings_refuse_values_that_cannot_work(name, value):
    result = _import_settings(SECRET_KEY="x", **{name: value})
    assert result.returncode != 0 and "JOB_" in result.stderr


def test_env_example_lists_every_variable_settings_read():
    import re

    source = (REPO_ROOT / "config" / "settings.py").read_text()
    read = set(re.findall(r'env_\w+\(\s*"([A-Z_]+)"', source))
    # a variable shown commented out (its default follows another, as SECURE_* follow DEBUG) is listed too
    listed = set(re.findall(r"^(?:# )?([A-Z_]+)=", (REPO_ROOT / ".env.example").read_text(), re.M))
    assert read - listed == set()
