"""mlworkers/ in layers, checked on the source (imports inside functions too):

- ml/ is the pure core: no Django, DRF or Celery, no other app but annotation's two pure modules
  (the papers' numbers, the taxonomy), nothing of mlworkers outside ml/;
- ml/'s shared modules (loading, metrics, memory) import no capability, and each capability imports
  only the capabilities below it: expansion (embeddings, similarity) under classifier, botstalk and
  rounds; generation alone;
- the job groups of mlworkers/ keep the same order: gold, naming and registry under every group,
  expansion under classifier, both under rounds, every group under chain; jobs.py and the
  commands above them all.
Each check is also run on a planted import, so that it cannot pass by reading nothing."""

from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.import_graph import import_graph, imports, python_files

ML = REPO_ROOT / "mlworkers" / "ml"
PURE_ALLOWED = {"annotation.papers", "annotation.taxonomy"}
IMPURE_TOPS = {"django", "rest_framework", "celery", "jobs", "labeling", "config", "annotation"}
# capability -> the capabilities it may import (the shared modules are open to all)
ML_BELOW = {
    "expansion": set(),
    "classifier": {"expansion"},
    "botstalk": {"expansion"},
    "rounds": {"expansion"},
    "generation": set(),
}
ML_SHARED = {"loading", "metrics", "memory"}
# job group -> the groups it may import (gold, naming, registry: open to all)
JOBS_BELOW = {
    "expansion": set(),
    "classifier": {"expansion"},
    "rounds": {"expansion", "classifier"},
    "botstalk": set(),
    "generation": set(),
    "chain": {"expansion", "classifier", "rounds", "botstalk", "generation"},
}
JOBS_SHARED = {"gold", "naming", "registry"}


def impure_imports(path: Path, importer: str) -> list[str]:
    wrong = []
    for module, _names, line in imports(path, importer):
        top = module.split(".")[0]
        outside_ml = top == "mlworkers" and not (module == "mlworkers.ml" or module.startswith("mlworkers.ml."))
        if (top in IMPURE_TOPS and module not in PURE_ALLOWED) or outside_ml:
            wrong.append(f"{path.relative_to(path.parents[3])}:{line}: {module}")
    return wrong


def group_of(module: str, prefix: str) -> str | None:
    """The first part of `module` after `prefix` (its group, or its shared module), else None."""
    if not module.startswith(prefix + "."):
        return None
    return module[len(prefix) + 1 :].split(".")[0]


def upward_imports(graph, prefix: str, below: dict[str, set[str]], shared: set[str]) -> list[str]:
    """Imports from a group (or a shared module) of `prefix` into a group it may not import."""
    wrong = []
    for source, edges in graph.items():
        source_group = group_of(source, prefix)
        if source_group not in below and source_group not in shared:
            continue
        allowed = below.get(source_group, set())
        for target, line in edges:
            target_group = group_of(target, prefix)
            if target_group in below and target_group != source_group and target_group not in allowed:
                wrong.append(f"{source}:{line} imports {target}")
    return sorted(wrong)


def test_ml_is_pure():
    wrong = [found for name, path in python_files(ML, REPO_ROOT).items() for found in impure_imports(path, name)]
    assert wrong == []


def test_the_ml_capabilities_import_only_downward():
    graph = import_graph(python_files(ML, REPO_ROOT))
    assert set(ML_BELOW) | ML_SHARED == {group_of(name, "mlworkers.ml") for name in graph} - {None}
    assert upward_imports(graph, "mlworkers.ml", ML_BELOW, ML_SHARED) == []


def test_the_job_groups_import_only_downward():
    graph = import_graph(python_files(REPO_ROOT / "mlworkers", REPO_ROOT))
    groups = {path.parent.name for path in (REPO_ROOT / "mlworkers").glob("*/__init__.py")}
    assert set(JOBS_BELOW) <= groups
    assert upward_imports(graph, "mlworkers", JOBS_BELOW, JOBS_SHARED) == []
    targets = {target for target, _ in graph["mlworkers.rounds.self_labeling"]}
    assert {"mlworkers.expansion.sbert", "mlworkers.classifier.weak_labeler"} <= targets  # the check reads edges


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("from django.conf import settings", True),
        ("from annotation.models import Turn", True),
        ("import jobs.runtime", True),
        ("from mlworkers.registry import artifact_path", True),
        ("from annotation.papers import TURN_WEIGHT_DECAY", False),
        ("from mlworkers.ml.expansion.embeddings import normalise_rows", False),
        ("import torch", False),
    ],
)
def test_the_purity_check_sees_an_impure_import_inside_a_function(tmp_path, code, found):
    path = tmp_path / "mlworkers" / "ml" / "classifier" / "m.py"
    path.parent.mkdir(parents=True)
    path.write_text(f"def f():\n    {code}\n")
    assert bool(impure_imports(path, "mlworkers.ml.classifier.m")) is found


def test_the_direction_check_sees_an_upward_import(tmp_path):
    for name, text in {
        "pkg/__init__.py": "",
        "pkg/loading.py": "",
        "pkg/expansion/__init__.py": "",
        "pkg/expansion/similarity.py": "def f():\n    from pkg.rounds import self_labeling\n",  # upward
        "pkg/rounds/__init__.py": "",
        "pkg/rounds/self_labeling.py": "from pkg.expansion.similarity import f\nfrom pkg import loading\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(python_files(tmp_path / "pkg", tmp_path))
    below = {"expansion": set(), "rounds": {"expansion"}}
    assert upward_imports(graph, "pkg", below, {"loading"}) == [
        "pkg.expansion.similarity:2 imports pkg.rounds",
        "pkg.expansion.similarity:2 imports pkg.rounds.self_labeling",
    ]
