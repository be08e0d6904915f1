"""The layers import downward only: jobs/ knows no app, annotation/ imports neither labeling/ nor
mlworkers/, labeling/ does not import mlworkers/, and config/ imports no app at module level."""

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

APPS = ("config", "jobs", "annotation", "labeling", "mlworkers")
# Who may import whom (besides itself). config's urls module is the one place that wires every
# app's URLs together; it is the root of the URL tree, not a layer apps build on.
ALLOWED = {
    "config": set(),
    "jobs": {"config"},
    "annotation": {"config", "jobs"},
    "labeling": {"config", "jobs", "annotation"},
    "mlworkers": {"config", "jobs", "annotation", "labeling"},
}
WIRING = {Path("config/urls.py")}
# Settings check INGEST_DISABLED_RULES against the pure rule list (no Django import in it).
# Settings read the papers' defaults from the pure constants module (no Django import in it either).
PURE_EXCEPTIONS = {
    (Path("config/settings.py"), "annotation.ingest.cleaning"),
    (Path("config/settings.py"), "annotation.papers"),
}


def imported_apps(path: Path) -> set[tuple[str, int]]:
    """Every (app, line) a module imports, including imports inside functions."""
    found = set()
    relative = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        names = [name for name in names if (relative, name) not in PURE_EXCEPTIONS]
        found |= {(name.split(".")[0], node.lineno) for name in names if name.split(".")[0] in APPS}
    return found


def import_arrows() -> list[tuple[str, str, str]]:
    arrows = []
    for app in APPS:
        for path in sorted((REPO_ROOT / app).rglob("*.py")):
            relative = path.relative_to(REPO_ROOT)
            if relative in WIRING:
                continue
            for target, line in imported_apps(path):
                if target != app:
                    arrows.append((app, target, f"{relative}:{line}"))
    return arrows


def test_every_import_between_apps_points_down():
    wrong = [f"{where}: {source} imports {target}" for source, target, where in import_arrows()
             if target not in ALLOWED[source]]  # fmt: skip
    assert wrong == []


def test_jobs_is_the_bottom_layer_every_app_builds_on():
    arrows = {(source, target) for source, target, _ in import_arrows()}
    assert {target for source, target in arrows if source == "jobs"} <= {"config"}
    assert {("annotation", "jobs"), ("labeling", "jobs"), ("mlworkers", "jobs")} <= arrows


@pytest.mark.parametrize(
    ("source", "code", "allowed"),
    [
        ("jobs", "from annotation.models import Turn", False),
        ("annotation", "import labeling.work.hits", False),
        ("labeling", "from mlworkers.pipeline import run_steps", False),
        ("mlworkers", "from labeling.work.hits import build_hits", True),
    ],
)
def test_the_check_sees_a_wrong_import(tmp_path, source, code, allowed):
    module = tmp_path / "m.py"
    module.write_text(f"def f():\n    {code}\n")
    ((target, line),) = imported_apps(module)
    assert line == 2 and (target in ALLOWED[source]) is allowed
