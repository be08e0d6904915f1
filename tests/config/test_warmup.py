"""A web process does its first request's one-off work as it starts (config.web.warmup, called by
config.wsgi): the URLconf imported with every view, each namespace's reverse map built, the
project's templates compiled into the cached loader; no database, and a template that does not
compile is left for its page to report."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.template import engines
from django.template.loaders.cached import Loader as CachedLoader
from django.test import override_settings
from django.utils.translation import trans_real

from config.web import warmup

REPO = Path(__file__).resolve().parents[2]


def _cached_loaders():
    return [loader for loader in engines["django"].engine.template_loaders if isinstance(loader, CachedLoader)]


def _project_templates() -> set[str]:
    root = Path(settings.BASE_DIR) / "templates"
    return {path.relative_to(root).as_posix() for path in root.rglob("*.html")}


@pytest.mark.django_db
def test_every_project_template_is_compiled_into_the_cached_loader(django_assert_num_queries):
    (loader,) = _cached_loaders()
    loader.reset()
    with django_assert_num_queries(0):
        done = warmup.warm_up()
    cached = {key.split("-")[0] for key in loader.get_template_cache}
    assert _project_templates() <= cached
    assert done["templates"] >= len(_project_templates())
    assert done["urls"] > 0 and done["namespaces"] >= 4  # labeling, annotation, jobs, mlworkers
    assert done["languages"] == len(settings.LANGUAGES)  # each language's catalogs read, none activated
    assert {code for code, _ in settings.LANGUAGES} <= set(trans_real._translations)


def test_no_template_of_an_installed_package_is_compiled():
    dirs = warmup._own_template_dirs(engines["django"])
    assert dirs
    assert all("site-packages" not in directory.parts for directory in dirs)


def test_a_template_that_does_not_compile_is_logged_and_left(tmp_path, monkeypatch, caplog):
    (tmp_path / "warm_fine.html").write_text("<p>{{ value }}</p>")
    (tmp_path / "warm_broken.html").write_text("{% if %}")
    templates = [{**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}]
    monkeypatch.setattr(warmup, "_own_template_dirs", lambda engine: [tmp_path])
    with override_settings(TEMPLATES=templates):
        assert warmup._compile_templates() == 1
    assert "warm_broken.html not compiled" in caplog.text
    assert "warm_fine.html" not in caplog.text


def test_the_wsgi_module_warms_the_process_before_its_first_request():
    code = (
        "import sys\n"
        "import config.wsgi\n"
        "from django.urls import get_resolver\n"
        "resolver = get_resolver()\n"
        "print('labeling.pages.annotator' in sys.modules, resolver._populated,"
        " all(sub._populated for _, sub in resolver.namespace_dict.values()))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]


@pytest.mark.parametrize("name", ["labeling/partials/screen.html", "labeling/screen_page.html", "base.html"])
def test_the_annotator_pages_templates_are_among_them(name):
    assert name in _project_templates()
