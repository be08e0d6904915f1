"""labeling/ as plug-ins: its import graph has no circle (imports inside functions included), no
module imports a group above its own (LAYERS), a task type imports no service, action, page or
platform, no module outside labeling/task_types/ asks which task type a campaign has, and no module
imports another module's private names.

Checked on the source (AST), so a function-level import counts like any other. Each check is
also run on a planted example, so that it cannot pass by reading nothing.
"""

import ast
import re
from pathlib import Path

import pytest

from tests import import_graph as graph_of
from tests.conftest import REPO_ROOT

LABELING = REPO_ROOT / "labeling"
TASK_TYPES = LABELING / "task_types"
# labeling's groups, top first: a module imports its own layer's and the layers below, never one
# above (docs/architecture.md, "labeling/ by who it serves"); the longest prefix names a module's
LAYERS = (
    # the pages and their URLs by audience, the API, and what Django and the runtime find by name
    (
        "labeling.pages",
        "labeling.api",
        "labeling.admin",
        "labeling.apps",
        "labeling.jobs",
        "labeling.tasks",
        "labeling.management",
        "labeling.templatetags",
    ),
    ("labeling.reports",),  # the researcher's reports and their cache
    ("labeling.platforms",),  # the crowd platforms, their landings and the crowds that drive them
    ("labeling.actions",),  # the annotator's actions
    ("labeling.services", "labeling.study_flow"),  # the services, one writer each; the study flow
    ("labeling.task_types.installed", "labeling.task_types.last_turn_label", "labeling.task_types.pairwise"),
    ("labeling.work", "labeling.task_types"),  # a HIT and its parts; the task types' contract and registry
    ("labeling.fast_path",),  # the annotator's hand-written SQL and compiled reads
    ("labeling.models", "labeling.crowd"),  # the tables; the crowd's rules (pure)
)
# what a task type may never import: the shell above it (it stores nothing through a service)
ABOVE_TASK_TYPES = (
    "labeling.services",
    "labeling.actions",
    "labeling.platforms",
    "labeling.reports",
    "labeling.pages",
    "labeling.api",
    "labeling.jobs",
)
# the names a test of a campaign's task type is spelled with
TYPE_CONSTANTS = {"LAST_TURN_LABEL", "PAIRWISE"}
TYPE_NAMES = {"task_type", *TYPE_CONSTANTS}
TYPE_VALUES = {"last_turn_label", "pairwise"}
TYPE_CLASSES = {"LastTurnLabel", "Pairwise"}
QUERY_METHODS = {"filter", "exclude", "get", "get_or_create", "update_or_create"}
# Campaign.task_type's default and the quiz pool's rows are the label type's by the data model
TYPE_TEST_ALLOWED = {Path("labeling/models/campaign.py")}
PRIVATE_SCOPE = ("labeling", "mlworkers")


# --- reading the source -------------------------------------------------------------------------


def python_files(top: Path, root: Path = REPO_ROOT) -> dict[str, Path]:
    """Module name -> file, for every module under `top` except migrations."""
    return {name: path for name, path in graph_of.python_files(top, root).items() if "migrations" not in path.parts}


def import_graph(top: Path, root: Path = REPO_ROOT) -> dict[str, set[tuple[str, int]]]:
    """The import graph of the modules under `top` (tests/import_graph.py's, the whole project's check)."""
    return graph_of.import_graph(python_files(top, root))


cycles = graph_of.cycles


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def forbidden_imports(graph: dict[str, set[tuple[str, int]]], package: str, forbidden) -> list[str]:
    return sorted(
        f"{source}:{line} imports {target}"
        for source, edges in graph.items()
        if source == package or source.startswith(package + ".")
        for target, line in edges
        if any(target == name or target.startswith(name + ".") for name in forbidden)
    )


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index (0: the top) of the layer whose longest prefix names `module`; None for none."""
    found = [
        (len(prefix), index)
        for index, prefixes in enumerate(layers)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    return max(found)[1] if found else None


def upward_imports(graph: dict[str, set[tuple[str, int]]], layers=LAYERS) -> list[str]:
    """Every import of a module in a higher layer than the importer's, and every module (but the
    package itself) that no layer names."""
    top = {name.split(".")[0] for name in graph}
    wrong = [f"{name} is in no layer" for name in sorted(graph) if name not in top and layer_of(name, layers) is None]
    for source, edges in sorted(graph.items()):
        for target, line in sorted(edges):
            below, above = layer_of(source, layers), layer_of(target, layers)
            if below is not None and above is not None and above < below:
                wrong.append(f"{source}:{line} imports {target}, a layer above it")
    return wrong


def type_tests(path: Path) -> list[int]:
    """Lines that ask which task type a campaign has: a comparison with a type's name or value,
    `uses_labels`, an isinstance of a type's class, or a query filtered by a type's name."""
    lines = []
    for node in ast.walk(_parse(path)):
        if (
            isinstance(node, ast.Compare)
            and any(_names_a_type(n) for n in [node.left, *node.comparators])
            or "uses_labels" in (getattr(node, "attr", None), getattr(node, "id", None))
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            if any(isinstance(n, ast.Name) and n.id in TYPE_CLASSES for n in ast.walk(node)):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in QUERY_METHODS:
            keywords = [kw.value for kw in node.keywords if kw.arg == "task_type"]
            lines += [value.lineno for value in keywords if _spells_a_type(value)]
    return sorted(set(lines))


def _names_a_type(node: ast.AST) -> bool:
    return getattr(node, "attr", getattr(node, "id", None)) in TYPE_NAMES or _spells_a_type(node)


def _spells_a_type(node: ast.AST) -> bool:
    """A type's name spelled out: its constant, or its value as a string."""
    return getattr(node, "id", getattr(node, "attr", None)) in TYPE_CONSTANTS or (
        isinstance(node, ast.Constant) and node.value in TYPE_VALUES
    )


TEMPLATE_TYPE_TEST = re.compile(r"uses_labels|task_type(\.name)?\s*(==|!=)|(==|!=)\s*task_type")


def private_imports(path: Path, importer: str, known: set[str]) -> list[str]:
    """`from module import _name`, and `module._name` on a project module bound by an import."""
    wrong = []
    bound: set[str] = set()
    tree = _parse(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = graph_of.absolute_module(node, importer, path.name == "__init__.py")
            for alias in node.names:
                if f"{module}.{alias.name}" in known:
                    bound.add(alias.asname or alias.name)
                elif _is_private(alias.name) and module.split(".")[0] in known_tops(known):
                    wrong.append(f"{node.lineno}: from {module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    bound.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and _root_name(node.value) in bound:
            wrong.append(f"{node.lineno}: {ast.unparse(node)}")
    return wrong


def known_tops(known: set[str]) -> set[str]:
    return {name.split(".")[0] for name in known}


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def project_modules() -> set[str]:
    names = set()
    for top in ("annotation", "config", "jobs", "labeling", "mlworkers"):
        names |= set(python_files(REPO_ROOT / top))
    return names


# --- the checks on our source -------------------------------------------------------------------


def test_labeling_has_no_import_circle():
    assert cycles(import_graph(LABELING)) == []


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports(import_graph(LABELING)) == []


def test_a_task_type_imports_no_service_campaign_or_view_module():
    assert forbidden_imports(import_graph(LABELING), "labeling.task_types", ABOVE_TASK_TYPES) == []


def test_the_check_reads_the_task_types_and_their_edges():
    graph = import_graph(LABELING)
    targets = {name: {target for target, _ in edges} for name, edges in graph.items()}
    assert {"labeling.task_types.last_turn_label", "labeling.task_types.pairwise"} <= set(graph)
    assert "labeling.task_types" in targets["labeling.work.hits"]  # the shell asks the type
    assert "labeling.work.hits" in targets["labeling.task_types.last_turn_label.tiebreak"]  # a lower module


def test_no_module_outside_the_task_types_asks_which_type_a_campaign_has():
    wrong = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for top in ("labeling", "mlworkers")
        for path in python_files(REPO_ROOT / top).values()
        if not path.is_relative_to(TASK_TYPES) and path.relative_to(REPO_ROOT) not in TYPE_TEST_ALLOWED
        for line in type_tests(path)
    ]
    wrong += [
        str(path.relative_to(REPO_ROOT))
        for path in sorted((REPO_ROOT / "templates").rglob("*.html"))
        if TEMPLATE_TYPE_TEST.search(path.read_text(encoding="utf-8"))
    ]
    assert wrong == []


def test_no_module_imports_another_modules_private_names():
    known = project_modules()
    wrong = [
        f"{path.relative_to(REPO_ROOT)}:{found}"
        for top in PRIVATE_SCOPE
        for name, path in python_files(REPO_ROOT / top).items()
        for found in private_imports(path, name, known)
    ]
    assert wrong == []


# --- each check sees a planted example ----------------------------------------------------------


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "pkg"


def test_the_circle_check_sees_a_circle_closed_inside_a_function(tmp_path):
    top = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def f():\n    from pkg.c import g\n",
            "pkg/c.py": "def g():\n    import pkg.a\n",
            "pkg/d.py": "from pkg.a import x\n",
        },
    )
    assert cycles(import_graph(top, tmp_path)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_the_circle_check_counts_a_package_that_imports_what_imports_it(tmp_path):
    top = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/types/__init__.py": "from pkg.types.one import One\nfrom pkg.types.two import Two\n",
            "pkg/types/one.py": "from pkg.types.base import Base\nfrom pkg.types import base\n",  # its own package
            "pkg/types/base.py": "",
            "pkg/services.py": "from pkg import types\n",
            "pkg/types/two.py": "from pkg.services import save\n",  # which needs types/__init__
            "pkg/shell.py": "import pkg.types.two\n",
        },
    )
    graph = import_graph(top, tmp_path)
    assert cycles(graph) == [["pkg.services", "pkg.types", "pkg.types.two"]]
    assert ("pkg.types", 1) in graph["pkg.shell"]  # importing a submodule runs its package


def test_the_task_type_check_sees_a_service_imported_inside_a_method(tmp_path):
    top = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/services.py": "",
            "pkg/task_types/__init__.py": "",
            "pkg/task_types/mine.py": "class Mine:\n    def save(self):\n        from pkg import services\n",
        },
    )
    found = forbidden_imports(import_graph(top, tmp_path), "pkg.task_types", ("pkg.services",))
    assert found == ["pkg.task_types.mine:3 imports pkg.services"]


def test_the_layer_check_sees_an_import_from_below_and_a_module_in_no_layer(tmp_path):
    top = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/pages/__init__.py": "",
            "pkg/pages/home.py": "from pkg.work import seats\n",  # down: allowed
            "pkg/work/__init__.py": "",
            "pkg/work/seats.py": "def f():\n    from pkg.pages.home import x\n",  # up, inside a function
            "pkg/stray.py": "",
        },
    )
    layers = (("pkg.pages",), ("pkg.work",))
    assert upward_imports(import_graph(top, tmp_path), layers) == [
        "pkg.stray is in no layer",
        "pkg.work.seats:2 imports pkg.pages, a layer above it",  # (importing a module runs its package)
        "pkg.work.seats:2 imports pkg.pages.home, a layer above it",
    ]
    assert layer_of("pkg.work.seats", (("pkg",), ("pkg.work",))) == 1  # the longest prefix


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("if campaign.task_type == LAST_TURN_LABEL:\n    pass\n", True),
        ("if not task_type.uses_labels:\n    pass\n", True),
        ("x = kind == 'pairwise'\n", True),
        ("x = isinstance(kind, Pairwise)\n", True),
        ("Campaign.objects.filter(task_type=PAIRWISE)\n", True),
        ("Campaign.objects.exclude(task_type='last_turn_label')\n", True),
        ("create_campaign('x', task_type=PAIRWISE)\n", False),
        ("kind = task_types.of(campaign)\nkind.aggregate(campaign)\n", False),
        ("create_campaign('x', task_type=task_type)\n", False),
    ],
)
def test_the_type_test_check_sees_a_branch_on_the_type(tmp_path, code, found):
    path = tmp_path / "m.py"
    path.write_text(code, encoding="utf-8")
    assert bool(type_tests(path)) is found


def test_the_type_test_check_reads_templates_too():
    assert TEMPLATE_TYPE_TEST.search("{% if task_type.uses_labels %}")
    assert TEMPLATE_TYPE_TEST.search('{% if campaign.task_type == "pairwise" %}')
    assert not TEMPLATE_TYPE_TEST.search("{% include task_type.detail_template %}")


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("from pkg.services import _label_set_names\n", True),
        ("from pkg import services\nservices._lock_live(a)\n", True),
        ("import pkg.services as s\ns._lock_live(a)\n", True),
        ("from pkg.services import save\nsave._cache\n", False),  # not a module: its own business
        ("from pkg.services import build_hits\n", False),
        ("from pkg import services\nservices.__name__\n", False),
    ],
)
def test_the_private_check_sees_a_private_name_taken_from_a_module(tmp_path, code, found):
    top = _plant(tmp_path, {"pkg/__init__.py": "", "pkg/services.py": "", "pkg/m.py": code})
    known = set(python_files(top, tmp_path))
    assert bool(private_imports(top / "m.py", "pkg.m", known)) is found
