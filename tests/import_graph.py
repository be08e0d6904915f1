"""The project's import graph, read from the source (AST): which project module runs which when it
is imported or called. Imports inside functions count like any other: a deferred import still ties
the two modules together, and a circle closed inside a function is a circle.

An import statement is an edge from the importing module to
- the module it names (`import a.b`, `from a.b import name`), unless every name taken from it is
  a submodule of its own (`from a import b` with a/b.py: the edge goes to a.b);
- those submodules;
- the packages above the module named that are not the importer's own packages (importing a.b
  runs a/__init__ first; the importer's own packages ran before it did).
A circle is a strongly connected component of more than one module (Tarjan's algorithm).
"""

from __future__ import annotations

import ast
from pathlib import Path

Graph = dict[str, set[tuple[str, int]]]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def python_files(top: Path, root: Path) -> dict[str, Path]:
    """Module name -> file, for every module under `top` (a folder, or one .py file), named from `root`."""
    paths = [top] if top.suffix == ".py" else sorted(top.rglob("*.py"))
    return {module_name(path, root): path for path in paths if "__pycache__" not in path.parts}


def absolute_module(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path, importer: str) -> list[tuple[str, list[str], int]]:
    """(module, names taken from it, line) of every import statement, wherever it stands."""
    found = []
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((absolute_module(node, importer, is_package), [a.name for a in node.names], node.lineno))
    return found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def import_edges(path: Path, importer: str, known: set[str]) -> set[tuple[str, int]]:
    """(project module, line) for every project module an import statement of `path` runs."""
    own = set(_ancestors(importer))
    edges = set()
    for module, names, line in imports(path, importer):
        submodules = {f"{module}.{name}" for name in names} & known
        only_submodules = bool(names) and len(submodules) == len(names)
        packages = {*_ancestors(module), module} if only_submodules else set(_ancestors(module))
        targets = submodules | {package for package in packages if package not in own}
        if not only_submodules:
            targets.add(module)
        edges |= {(target, line) for target in targets if target in known and target != importer}
    return edges


def import_graph(files: dict[str, Path]) -> Graph:
    known = set(files)
    return {name: import_edges(path, name, known) for name, path in files.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative:
    a path through the whole project is deeper than Python's recursion limit), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph.get(root, ()))))]
        while work:
            node, targets = work[-1]
            for target, _line in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def describe(graph: Graph, circle: list[str]) -> str:
    """A circle with the lines that close it: `a:12 -> b`, one per edge inside it."""
    members = set(circle)
    edges = sorted(
        f"{source}:{line} -> {target}" for source in circle for target, line in graph[source] if target in members
    )
    return "; ".join(edges)
