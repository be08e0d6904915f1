"""The manual's reference pages are generated from the code, and every command, job kind and setting
has an entry: a command without help text, a job or parameter without a description, or a setting
read without a `.env.example` entry fails here. The README is a front door that links into it."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import Field

from jobs import reference
from jobs.registry import JobParameters, JobSpec
from tests.conftest import REPO_ROOT

MKDOCS = Path(sys.executable).with_name("mkdocs")


def test_every_command_and_argument_has_help_text():
    commands = reference.our_commands()
    assert {"ingest", "run_worker", "run_pipeline", "publish_campaign", "docs_reference"} <= {c.name for c in commands}
    assert reference.missing_command_help(commands) == []


def test_it_refuses_a_command_without_help_text():
    silent = reference.CommandDoc("quiet", "labeling", "", "usage: manage.py quiet", ("--loud",))
    missing = reference.missing_command_help([silent])
    assert missing == [
        "labeling/management/commands/quiet.py: the command has no `help`",
        "labeling/management/commands/quiet.py: argument --loud has no help",
    ]


def test_every_job_kind_and_parameter_is_described():
    jobs = reference.job_kinds()
    assert {"ingest", "weak_train", "bulk_annotate", "labeling.platform_sync"} <= {job.kind for job in jobs}
    assert reference.missing_job_descriptions(jobs) == []


def _spec(kind: str, parameters: type[JobParameters], doc: str | None) -> JobSpec:
    def run(job, **parameters):
        return {}

    run.__doc__ = doc
    description = (doc or "").strip()
    return JobSpec(kind, run, "default", parameters, True, description)


def test_it_refuses_a_job_or_parameter_without_a_description():
    class Parameters(JobParameters):
        threshold: float = Field(0.9, ge=0.5, le=1.0, description="the least similarity")
        count: int = 3

    described = reference._job_doc(_spec("tidy", Parameters, "Tidies up."))
    bare = reference._job_doc(_spec("untidy", Parameters, None))
    missing = reference.missing_job_descriptions([described, bare])
    assert [line.split(": ", 1)[1] for line in missing] == [
        "parameter 'count' of job 'tidy' has no title or description",
        "job 'untidy' has no docstring",
        "parameter 'count' of job 'untidy' has no title or description",
    ]


def test_a_job_page_lists_each_parameter_with_its_type_default_and_bounds():
    class Parameters(JobParameters):
        threshold: float = Field(0.92, ge=0.5, le=1.0, title="Similarity", description="the least cosine")

    page = reference.jobs_page([reference._job_doc(_spec("expand", Parameters, "Expands gold."))])
    assert "| `threshold` | `float` | `0.92` | ≥ 0.5, ≤ 1.0 | Similarity: the least cosine |" in page
    assert "| [`expand`](#expand) | `default` | yes | Expands gold. |" in page


def test_every_setting_read_has_an_env_example_entry():
    names = {setting.name for setting in reference.settings_read(REPO_ROOT)}
    assert {"DATABASE_URL", "JOB_STALE_SECONDS", "PROLIFIC_API_TOKEN", "ML_NUM_THREADS"} <= names
    assert reference.missing_setting_descriptions(REPO_ROOT) == []


def test_it_refuses_a_setting_read_without_an_env_example_entry(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.py").write_text(
        'A = env_int("KNOWN_LIMIT", 3)\nB = env_bool("NEW_SWITCH", default=not DEBUG)\n'
    )
    (tmp_path / "labeling").mkdir()
    (tmp_path / "labeling" / "platform.py").write_text('import os\nTOKEN = os.environ.get("NEW_TOKEN", "")\n')
    (tmp_path / ".env.example").write_text("# How many at most.\nKNOWN_LIMIT=3\n\n# NEW_SWITCH=1\n")
    missing = reference.missing_setting_descriptions(tmp_path)
    assert missing == [
        "config/settings.py: NEW_SWITCH is read but has no described entry in .env.example",
        "labeling/platform.py: NEW_TOKEN is read but has no described entry in .env.example",
    ]
    page = reference.settings_page(reference.settings_with_descriptions(tmp_path))
    assert "| `NEW_SWITCH` | `env_bool` | `not DEBUG` | `config/settings.py` |  |" in page


def test_env_example_comments_describe_the_variables_below_them(tmp_path):
    example = tmp_path / ".env.example"
    example.write_text(
        "# --- Jobs\n# Recovery: beats and the stale limit.\nJOB_HEARTBEAT_SECONDS=15\nJOB_STALE_SECONDS=120\n"
        "# keywords, with spaces\nKEYWORDS=emotion, dialogue\n# PROLIFIC_API_TOKEN=\n\nLONELY=1\n"
        "# prose that names SECURE_COOKIES=0 and more\n"
    )
    assert reference.env_example(example) == {
        "JOB_HEARTBEAT_SECONDS": "Jobs Recovery: beats and the stale limit.",
        "JOB_STALE_SECONDS": "Jobs Recovery: beats and the stale limit.",
        "KEYWORDS": "keywords, with spaces",
        "PROLIFIC_API_TOKEN": "keywords, with spaces",
        "LONELY": "",
    }


def test_the_generated_reference_pages_are_up_to_date():
    stale = [relative for relative, text in reference.pages(REPO_ROOT).items()
             if not (REPO_ROOT / relative).exists() or (REPO_ROOT / relative).read_text() != text]  # fmt: skip
    assert stale == [], "run: python manage.py docs_reference (or make docs) and commit the pages"


# --- the README is a front door; the manual builds strict ----------------------------------------


def test_the_readme_is_a_front_door_that_links_into_the_manual():
    readme = (REPO_ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "make demo" in readme and "make test" in readme and "demo-researcher" in readme
    targets = re.findall(r"\]\(((?:docs/)[^)#]+)", readme)
    assert "docs/getting-started.md" in targets and len(targets) >= 15
    assert [target for target in targets if not (REPO_ROOT / target).is_file()] == []


def test_ci_runs_the_readmes_test_command_and_it_builds_the_manual():
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "make test" in ci and "make test" in (REPO_ROOT / "README.md").read_text()
    test_target = next(line for line in makefile.splitlines() if line.startswith("test:"))
    assert "docs-check" in test_target
    recipe = makefile.split("\ndocs-check:", 1)[1].split("\n\n", 1)[0]
    assert "docs_reference --check" in recipe and "build --strict" in recipe


@pytest.fixture
def mkdocs():
    if not MKDOCS.exists():
        pytest.skip(f"mkdocs is not installed in this environment ({MKDOCS}); pip install -e '.[dev]'")
    return MKDOCS


def makefile_build_options() -> list[str]:
    """The options `make docs-check` (part of `make test`) builds with: the test builds the same way.
    (`--quiet` would hide the warnings that --strict counts, and a broken link would pass.)"""
    recipe = (REPO_ROOT / "Makefile").read_text().split("\ndocs-check:", 1)[1].split("\n\n", 1)[0]
    line = next(line for line in recipe.splitlines() if "$(MKDOCS) build" in line)
    return line.split("$(MKDOCS) build", 1)[1].split()


def _build(mkdocs: Path, folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [str(mkdocs), "build", *makefile_build_options(), "--site-dir", str(folder / "site")]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def _copy_of_the_manual(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "docs", folder / "docs")
    shutil.copy(REPO_ROOT / "mkdocs.yml", folder / "mkdocs.yml")
    return folder


def test_it_refuses_to_build_the_manual_with_a_broken_link(mkdocs, tmp_path):
    folder = _copy_of_the_manual(tmp_path)
    page = folder / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the old page](crowd/no-such-page.md).\n")
    built = _build(mkdocs, folder)
    assert built.returncode != 0
    assert "no-such-page.md" in built.stdout + built.stderr


def test_the_manual_builds_strict(mkdocs, tmp_path):
    built = _build(mkdocs, _copy_of_the_manual(tmp_path))
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "repo" / "site" / "reference" / "jobs" / "index.html").is_file()
