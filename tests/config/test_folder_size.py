"""No package of the project holds more than 20 modules and packages at its first level: past that a
folder stops reading as a table of contents (annotation/ingest/ shows the shape: a package per
capability). Counted: the package's modules except its own `__init__.py`, and its subpackages
(folders with an `__init__.py`) except `migrations/`, whose files Django numbers and names. Not
counted: folders of data, templates, static files or catalogs (no `__init__.py`: nothing imports
them), the tests (one file per feature, mirroring the code: tests/<app>/test_<feature>.py) and
bench/ (one script per figure, named by the manual's benchmark pages)."""

from pathlib import Path

from tests.conftest import REPO_ROOT

LIMIT = 20
PACKAGES = [
    *(REPO_ROOT / top for top in ("annotation", "config", "jobs", "labeling", "mlworkers")),
    REPO_ROOT / "client" / "dialogue_curation_client",
]


def entries(folder: Path) -> list[str]:
    modules = [path.name for path in folder.glob("*.py") if path.name != "__init__.py"]
    packages = [
        path.name + "/"
        for path in folder.iterdir()
        if path.is_dir() and (path / "__init__.py").exists() and path.name != "migrations"
    ]
    return sorted(modules + packages)


def packages_under(top: Path) -> list[Path]:
    found = [top]
    for path in sorted(top.rglob("__init__.py")):
        if "migrations" not in path.relative_to(top).parts:
            found.append(path.parent)
    return sorted(set(found))


def crowded(limit: int = LIMIT, tops: list[Path] = PACKAGES) -> dict[str, int]:
    return {
        str(folder.relative_to(REPO_ROOT)): len(entries(folder))
        for top in tops
        for folder in packages_under(top)
        if len(entries(folder)) > limit
    }


def test_no_package_holds_more_than_20_modules_and_packages():
    assert crowded() == {}


def test_the_count_reads_modules_and_packages_but_not_migrations_or_data(tmp_path):
    top = tmp_path / "app"
    for name in ("__init__.py", "a.py", "b.py", "sub/__init__.py", "sub/c.py", "migrations/__init__.py",
                 "migrations/0001_initial.py", "data/seed.csv", "templates/app/page.html"):  # fmt: skip
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text("")
    assert entries(top) == ["a.py", "b.py", "sub/"]
    assert packages_under(top) == [top, top / "sub"]


def test_the_check_sees_a_crowded_package():
    assert crowded(limit=5)  # several of our packages pass 5 entries: the counter reads them
