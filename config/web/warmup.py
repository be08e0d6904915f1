"""The work a web process would otherwise do on its first requests, done as it starts.

Django imports the URLconf (and with it every view module, DRF, the admin's) on the first request
a process serves, builds each namespace's reverse map on its first reverse(), and compiles a
template the first time it is rendered. On a 2-core machine that is 0.35-0.4 s of CPU per
gunicorn worker, taken from the first requests it answers (and the first request in each language
reads that language's catalogs, every app's .mo files): right after a deploy or a worker's
restart, in the first second of a study, every arrival queued behind it (issue 37). config.wsgi
calls warm_up() once the application is loaded, before the worker accepts a connection.

Nothing here touches the database or changes a setting: a template that does not compile is
left for its page to report, as it would have been without the warm-up.
"""

import logging
import time
from pathlib import Path

from django.conf import settings
from django.template import TemplateDoesNotExist, TemplateSyntaxError, engines
from django.urls import get_resolver
from django.utils.translation import trans_real

log = logging.getLogger(__name__)


def warm_up() -> dict:
    """Import the URLconf, build every namespace's reverse map, compile the project's templates and
    read each shipped language's catalogs. Returns what it did ({"urls": patterns, "namespaces": n,
    "templates": n, "languages": n, "seconds": s})."""
    started = time.perf_counter()
    resolver = get_resolver()
    patterns = len(resolver.url_patterns)  # imports the URLconf and every view module
    namespaces = _populate(resolver)
    templates = _compile_templates()
    languages = _load_catalogs()
    seconds = time.perf_counter() - started
    log.debug(
        "warm-up: %d URL patterns, %d namespaces, %d templates in %.2f s", patterns, namespaces, templates, seconds
    )
    return {
        "urls": patterns,
        "namespaces": namespaces,
        "templates": templates,
        "languages": languages,
        "seconds": seconds,
    }


def _load_catalogs() -> int:
    """Read the catalogs of every language in LANGUAGES into Django's per-process cache (what
    activating a language reads the first time), without activating any."""
    for code, _name in settings.LANGUAGES:
        trans_real.translation(code)
    return len(settings.LANGUAGES)


def _populate(resolver) -> int:
    """Build the reverse maps of the resolver and of every namespace under it (what reverse()
    builds on its first call for a name in that namespace). Returns how many namespaces."""
    resolver.reverse_dict  # noqa: B018 (the property builds the map)
    count = 0
    for _prefix, namespaced in resolver.namespace_dict.values():
        count += 1 + _populate(namespaced)
    return count


def _compile_templates() -> int:
    """Compile each template under the template engines' own directories (DIRS and the apps'
    templates/ folders of this project, not those of installed packages), once, into the cached
    loader. Returns how many compiled."""
    compiled = 0
    for engine in engines.all():
        for directory in _own_template_dirs(engine):
            for path in sorted(directory.rglob("*.html")):
                name = path.relative_to(directory).as_posix()
                try:
                    engine.get_template(name)
                except (TemplateDoesNotExist, TemplateSyntaxError) as error:
                    # its page reports it, as it would have without the warm-up
                    log.warning("warm-up: template %s not compiled: %s", name, error)
                    continue
                compiled += 1
    return compiled


def _own_template_dirs(engine) -> list[Path]:
    """The directories the engine searches that belong to this project (not site-packages)."""
    base = Path(settings.BASE_DIR).resolve()
    dirs = []
    for directory in getattr(engine, "template_dirs", ()):
        directory = Path(directory).resolve()
        if directory.is_dir() and directory.is_relative_to(base) and "site-packages" not in directory.parts:
            dirs.append(directory)
    return dirs
