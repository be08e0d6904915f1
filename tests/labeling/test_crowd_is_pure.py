"""labeling/crowd/ is the crowd's arithmetic with no database: its modules import only the standard
library, numpy, krippendorff (a numpy-only package, for alpha in intervals.py), regex and fontTools
(Unicode's character properties, for UTS #39 in uts39.py) and annotation's two pure modules (taxonomy, the CSV cell reader), checked on the
source (imports inside functions too) and by importing the whole package in a fresh interpreter."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CROWD = REPO_ROOT / "labeling" / "crowd"
ALLOWED_MODULES = {
    "numpy",
    "krippendorff",
    "annotation.taxonomy",
    "annotation.export.cells",
    # Unicode data for UTS #39 (uts39.py): pure packages with no Django
    "regex",
    "fontTools",
}


def imported_modules(path: Path) -> set[tuple[str, int]]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {(alias.name, node.lineno) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.add(("labeling.crowd", node.lineno))  # a relative import stays inside crowd/
            elif node.module:
                found.add((node.module, node.lineno))
    return found


def is_allowed(module: str) -> bool:
    top = module.split(".")[0]
    return (
        top in sys.stdlib_module_names
        or top == "__future__"
        or module in ALLOWED_MODULES
        or top == "numpy"
        or module == "labeling.crowd"
        or module.startswith("labeling.crowd.")
    )


def test_crowd_holds_the_pure_modules():
    names = {path.stem for path in CROWD.glob("*.py")} - {"__init__"}
    assert {"majority", "agreement", "dawid_skene", "speed", "win_rates", "bundling", "pairing"} <= names
    assert {"quiz_bank", "redundancy"} <= names


def test_crowd_imports_no_django_and_no_other_app_module():
    wrong = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {module}"
        for path in sorted(CROWD.rglob("*.py"))
        for module, line in imported_modules(path)
        if not is_allowed(module)
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("code", "allowed"),
    [
        ("from django.db import models", False),
        ("import labeling.models", False),
        ("from labeling import services", False),
        ("from annotation.models import Turn", False),
        ("from annotation.taxonomy import TAXONOMY", True),
        ("import numpy as np", True),
        ("from collections import Counter", True),
        ("from labeling.crowd.majority import majority_vote", True),
    ],
)
def test_the_check_sees_a_wrong_import(tmp_path, code, allowed):
    module = tmp_path / "m.py"
    module.write_text(f"def f():\n    {code}\n")
    ((name, line),) = imported_modules(module)
    assert line == 2 and is_allowed(name) is allowed


def test_importing_every_crowd_module_loads_no_django():
    modules = sorted(f"labeling.crowd.{path.stem}" for path in CROWD.glob("*.py") if path.stem != "__init__")
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'rest_framework', 'celery')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
