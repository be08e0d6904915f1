"""No module of labeling/ or mlworkers/ grows past 500 lines (migrations aside): a module that long
is two modules (the labeling redesign split services, pipeline, models and the MTurk adapter)."""

from tests.conftest import REPO_ROOT

LIMIT = 500


def long_modules(limit: int = LIMIT) -> dict[str, int]:
    found = {}
    for app in ("labeling", "mlworkers"):
        for path in sorted((REPO_ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found[str(path.relative_to(REPO_ROOT))] = lines
    return found


def test_no_module_of_labeling_or_mlworkers_is_over_500_lines():
    assert long_modules() == {}


def test_the_check_sees_a_long_module():
    assert long_modules(limit=100)  # many modules pass 100 lines: the counter reads them
