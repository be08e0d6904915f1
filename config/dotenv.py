"""The `.env` file in the project folder, read the one way manage.py, honcho and docker compose share.

The format is the part the three readers agree on: `NAME=value` lines, `#` starting a comment line,
blank lines ignored, the value taken as written after the first `=` (no quotes needed, no `$`
expansion, no `export`); a name given twice keeps its last value. A variable already set in the
environment wins over the file, so `DEBUG=1 python manage.py ...` overrides `.env` for one command.

Only the entry points read it (manage.py, `python -m config.beat`); settings never do, and the
test suite sets ENV_FILE empty, so it runs the shipped defaults whatever a developer keeps in `.env`.
"""

import os
import re
from pathlib import Path

ENV_FILE = Path(__file__).resolve().parent.parent / ".env"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class EnvFileError(ValueError):
    pass


def read_env_file(path: Path) -> dict[str, str]:
    """The settings a `.env` file gives; a line that is neither blank, a comment nor NAME=value
    is an error naming the file and line (a typo never passes silently)."""
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, equals, value = stripped.partition("=")
        if not equals or not _NAME.fullmatch(name.strip()):
            raise EnvFileError(f"{path}: line {number}: expected NAME=value, got {stripped[:40]!r}")
        values[name.strip()] = _unquoted(value.strip())
    return values


def _unquoted(value: str) -> str:
    """'x' and "x" give x, as honcho's and compose's readers do."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def chosen_env_file() -> Path | None:
    """ENV_FILE names another file; set empty it turns the file off (the test suite does, so the
    processes its tests start run the shipped defaults, not a developer's .env)."""
    chosen = os.environ.get("ENV_FILE", str(ENV_FILE))
    return Path(chosen) if chosen.strip() else None


def load_env_file(path: Path | None = None) -> list[str]:
    """Put the file's settings (default: chosen_env_file()) into os.environ where the environment has
    none; returns the names set. No file: nothing to do (every setting has a default or says so)."""
    path = chosen_env_file() if path is None else path
    if path is None or not path.is_file():
        return []
    added = {name: value for name, value in read_env_file(path).items() if name not in os.environ}
    os.environ.update(added)
    return list(added)
