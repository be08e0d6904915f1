"""Typed readers for environment variables that fail loudly on a bad value.

Settings call these at import time, so a typo in `.env` stops the process at start-up with the
variable's name in the message instead of surfacing later as an odd runtime error.
"""

import os


class ConfigError(RuntimeError):
    pass


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None else value


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str | None, schemes: tuple[str, ...]) -> str | None:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    scheme = raw.split("://", 1)[0] if "://" in raw else ""
    if scheme not in schemes:
        raise ConfigError(f"{name}={raw!r} must start with one of {', '.join(s + '://' for s in schemes)}")
    return raw
