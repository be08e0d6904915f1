"""No import circle anywhere in the project: the apps, config/, the typed client, the benches, the
demo's scripts, manage.py and the tests themselves, read as one graph (tests/import_graph.py:
imports inside functions count, so a circle cannot hide in a deferred import). A module that
needs what imports it is cut in two, the shared piece moved down into a module of its own.

Each check is also run on a planted example, so that it cannot pass by reading nothing."""

from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.import_graph import cycles, describe, import_graph, python_files

# (folder or file, the folder its module names start from)
SOURCES = [
    *((REPO_ROOT / top, REPO_ROOT) for top in ("annotation", "config", "jobs", "labeling", "mlworkers")),
    (REPO_ROOT / "client" / "dialogue_curation_client", REPO_ROOT / "client"),
    (REPO_ROOT / "bench", REPO_ROOT),
    (REPO_ROOT / "demo", REPO_ROOT),
    (REPO_ROOT / "tests", REPO_ROOT),
    (REPO_ROOT / "manage.py", REPO_ROOT),
]


def project_files() -> dict[str, Path]:
    files: dict[str, Path] = {}
    for top, root in SOURCES:
        files |= python_files(top, root)
    return files


def test_the_project_has_no_import_circle():
    graph = import_graph(project_files())
    assert [describe(graph, circle) for circle in cycles(graph)] == []


def test_the_check_reads_every_package_and_the_edges_between_them():
    files = project_files()
    graph = import_graph(files)
    targets = {name: {target for target, _ in edges} for name, edges in graph.items()}
    tops = {name.split(".")[0] for name in files}
    assert {"annotation", "config", "jobs", "labeling", "mlworkers", "dialogue_curation_client"} <= tops
    assert {"bench", "demo", "tests", "manage"} <= tops
    assert "jobs.runtime" in targets["jobs.tasks"]  # the task runs the runtime
    assert "config.sessions.store" in targets["config.sessions.models"]
    assert "dialogue_curation_client.models" in targets["dialogue_curation_client.client"]


# --- the check sees a planted circle ------------------------------------------------------------


def _plant(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return python_files(tmp_path / "pkg", tmp_path)


def test_the_check_sees_a_circle_closed_inside_a_function_across_packages(tmp_path):
    files = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/runtime.py": "def queue():\n    from pkg.tasks import run\n",
            "pkg/tasks.py": "from pkg import runtime\n",
            "pkg/ml/__init__.py": "",
            "pkg/ml/a.py": "from pkg.ml import b\n",
            "pkg/ml/b.py": "def f():\n    from ..ml.a import g\n",  # relative, inside a function
            "pkg/ml/c.py": "from pkg.ml.a import x\n",  # imports the circle, is not in it
        },
    )
    graph = import_graph(files)
    assert cycles(graph) == [["pkg.ml.a", "pkg.ml.b"], ["pkg.runtime", "pkg.tasks"]]
    assert describe(graph, ["pkg.runtime", "pkg.tasks"]) == "pkg.runtime:2 -> pkg.tasks; pkg.tasks:1 -> pkg.runtime"


def test_the_check_counts_a_package_that_imports_what_imports_it(tmp_path):
    files = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/ml/__init__.py": "from pkg.ml.one import One\n",
            "pkg/ml/one.py": "from pkg.ml import two\n",  # its own package: already running
            "pkg/ml/two.py": "",
            "pkg/jobs.py": "from pkg.ml import one\n",
            "pkg/ml/three.py": "import pkg.jobs\n",  # pkg.jobs runs pkg/ml/__init__ ... which is fine
        },
    )
    assert cycles(import_graph(files)) == []
    files = _plant(tmp_path, {"pkg/ml/two.py": "import pkg.jobs\n"})  # ml/__init__ -> one -> two -> jobs -> ml
    assert cycles(import_graph(files)) == [["pkg.jobs", "pkg.ml", "pkg.ml.one", "pkg.ml.two"]]


def test_the_check_walks_a_chain_deeper_than_the_recursion_limit(tmp_path):
    chain = {f"pkg/m{i}.py": f"import pkg.m{i + 1}\n" for i in range(3000)}
    files = _plant(tmp_path, {"pkg/__init__.py": "", **chain, "pkg/m3000.py": "import pkg.m0\n"})
    ((circle,),) = [cycles(import_graph(files))]
    assert len(circle) == 3001
