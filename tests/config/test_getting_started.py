"""docs/getting-started.md, followed as printed: its shell blocks run in order, in one bash, in a
fresh copy of the project (the files git knows) in a temporary folder, with no setting in the
environment but PATH and HOME. Blocks marked `<!-- getting-started-test: skip (why) -->` (they
install or serve) are left out. The run must reach a campaign published on the local platform with
an approved and paid HIT, read from the copy's own database.

Real processes (the page starts a job worker), about two minutes on 2 cores: `slow` and `alone`.
"""

import contextlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "getting-started.md"
SKIP_MARK = re.compile(r"<!-- getting-started-test: skip \((?P<why>[^)]+)\) -->\s*$")
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")
RUN_LIMIT_S = 900
SHOW_SETTINGS = (
    "from django.conf import settings as s; "
    'print(s.DEBUG, s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SECRET_KEY.startswith("dev-only"))'
)


def shell_blocks(text: str) -> list[tuple[str, str | None]]:
    """Every ```sh block of a markdown page, in order, with the reason it is skipped (None: it runs)."""
    blocks, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence and fence["lang"] in ("sh", "bash", "console", "shell"):
            end = lines.index("```", index + 1)
            previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
            skipped = SKIP_MARK.match(previous.strip())
            blocks.append(("\n".join(lines[index + 1 : end]), skipped["why"] if skipped else None))
            index = end
        elif fence:
            index = lines.index("```", index + 1)
        index += 1
    return blocks


def test_it_reads_the_blocks_and_their_skip_marks():
    page = "intro\n<!-- getting-started-test: skip (serves) -->\n```sh\nmake demo\n```\n\n```python\nx = 1\n```\n```sh\necho hi\n```\n"
    assert shell_blocks(page) == [("make demo", "serves"), ("echo hi", None)]


def test_the_page_runs_commands_and_skips_only_installing_or_serving():
    blocks = shell_blocks(PAGE.read_text())
    reasons = [why for _, why in blocks if why]
    assert all(("install" in why or "serve" in why) for why in reasons), reasons
    run = "\n".join(block for block, why in blocks if why is None)
    for command in ("add_accounts", "ingest", "import_quiz", "run_pipeline", "publish_campaign", "record_payments"):
        assert f"manage.py {command}" in run


def _fresh_copy(into: Path) -> None:
    """The files a fresh clone has (tracked, and new ones git does not ignore), and the suite's venv."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO_ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO_ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    (into / ".venv").symlink_to(Path(sys.prefix))


def _run_page(folder: Path, script: str) -> subprocess.CompletedProcess:
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), "LANG": "C.UTF-8"}
    process = subprocess.Popen(
        ["bash", "-c", "set -eo pipefail -x\n" + script], cwd=folder, env=environment,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = process.communicate(timeout=RUN_LIMIT_S)
    finally:  # the page's background worker, even when a command failed before its `kill`
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    return subprocess.CompletedProcess(process.args, process.returncode, output)


def _one(database: Path, query: str) -> int:
    with sqlite3.connect(database) as connection:
        return connection.execute(query).fetchone()[0]


@pytest.mark.slow
@pytest.mark.alone
def test_the_page_followed_as_printed_reaches_an_approved_and_paid_hit(tmp_path):
    if not (REPO_ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs the project's git checkout to copy what a clone holds")
    _fresh_copy(tmp_path)
    script = "\n".join(block for block, why in shell_blocks(PAGE.read_text()) if why is None)
    result = _run_page(tmp_path, script)
    assert result.returncode == 0, result.stdout[-6000:]
    database = tmp_path / "db.sqlite3"
    published = _one(database, "SELECT count(*) FROM labeling_hit WHERE external_id LIKE 'local:%'")
    approved = _one(database, "SELECT count(*) FROM labeling_assignment WHERE status = 'approved'")
    paid = _one(database, "SELECT count(*) FROM labeling_paymententry WHERE paid_at IS NOT NULL")
    opened = _one(database, "SELECT count(*) FROM labeling_campaign WHERE status = 'open'")
    assert (opened, published) == (1, 2), result.stdout[-3000:]
    assert approved == 3 and paid >= approved, result.stdout[-3000:]
    # the page's .env is read by manage.py with nothing in the environment: a local plain-HTTP site
    shown = _run_page(tmp_path, f"{tmp_path}/.venv/bin/python manage.py shell -c '{SHOW_SETTINGS}'")
    assert shown.stdout.strip().splitlines()[-1] == "True False 0 False", shown.stdout[-2000:]
    left_open = _one(
        database, "SELECT count(*) FROM labeling_hit WHERE id NOT IN (SELECT hit_id FROM labeling_assignment)"
    )
    assert left_open == 1, "one HIT stays open for the page's annotators"
