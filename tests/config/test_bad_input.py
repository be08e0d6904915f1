"""Generated junk posted to every endpoint: never a 500, and an error answer changes no row.

The endpoints come from walking the URL resolver, so pages and API routes added later are
covered without touching this file. Each is tried as staff, as an annotator and anonymously,
with POST/PUT/PATCH bodies (form-encoded, JSON, malformed JSON, a wrong content type) and GET
query strings, built from every field name our forms, serializers and templates use, filled
with huge strings, NUL bytes, 4,000-digit and negative numbers and unknown labels. Path
parameters get real ids, 0, huge numbers and unknown `.format` suffixes.

Examples per endpoint: the hypothesis profile "bad-input" (`BAD_INPUT_EXAMPLES`, default 12).
"""

import json
import os
import re
from importlib import import_module
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labeling.actions.claim import claim_next_hit
from labeling.models import Assignment, Worker
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT_APPS = ("annotation", "labeling", "mlworkers", "jobs", "config")
SKIPPED_PREFIXES = ("admin/",)  # Django's own admin, not our forms
# Tables that legitimately change on a refused request: sessions and login-attempt records.
UNWATCHED_APPS = {"sessions", "axes", "admin"}

settings.register_profile(
    "bad-input",
    max_examples=int(os.environ.get("BAD_INPUT_EXAMPLES", "12")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("bad-input")


def _walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def endpoints() -> list[str]:
    routes = sorted(set(_walk(get_resolver().url_patterns)))
    return [route for route in routes if not route.startswith(SKIPPED_PREFIXES)]


def field_names() -> list[str]:
    """Every field name a form, serializer or template of ours posts."""
    from django import forms
    from rest_framework import serializers

    _import_form_modules()
    names: set[str] = set()
    for form in _subclasses(forms.BaseForm):
        names |= set(getattr(form, "base_fields", {}))
    for serializer in _subclasses(serializers.BaseSerializer):
        try:
            names |= set(serializer().fields)
        except Exception:  # a serializer that needs context still lends its declared fields
            names |= set(getattr(serializer, "_declared_fields", {}))
    for template in (REPO_ROOT / "templates").rglob("*.html"):
        names |= set(re.findall(r'name="([A-Za-z_][\w-]*)"', template.read_text(encoding="utf-8")))
    # and the fields of markup a module builds itself (a task type's screen parts)
    for app in PROJECT_APPS:
        for module in (REPO_ROOT / app).rglob("*.py"):
            names |= set(FIELD_IN_MARKUP.findall(module.read_text(encoding="utf-8")))
    return sorted(names - {"csrfmiddlewaretoken"})


FIELD_IN_MARKUP = re.compile(r'<(?:input|select|textarea|button)\b[^>]*?\bname="([A-Za-z_][\w-]*)"')


PAGE_PACKAGES = {"pages", "api"}  # labeling's pages and API: every module in them posts or serves


def form_modules() -> list[str]:
    """Every module of an app, at any depth, named for forms, serializers, an API or views, or in a
    package of pages or of an API."""
    found = []
    for app in PROJECT_APPS:
        folder = REPO_ROOT / app
        for module in sorted(folder.rglob("*.py")) if folder.is_dir() else ():
            parts = module.relative_to(REPO_ROOT).with_suffix("").parts
            if "migrations" in parts or module.stem == "__init__":
                continue
            if re.search(r"(forms|serializers|api|views)$", module.stem) or PAGE_PACKAGES & set(parts[1:-1]):
                found.append(".".join(parts))
    return found


def _import_form_modules() -> None:
    """Import every app's forms, serializers and views, so their classes are known subclasses."""
    for name in form_modules():
        import_module(name)


def _subclasses(base):
    seen = set()
    stack = [base]
    while stack:
        for cls in stack.pop().__subclasses__():
            if cls not in seen:
                seen.add(cls)
                stack.append(cls)
    return [cls for cls in seen if cls.__module__.split(".")[0] in PROJECT_APPS]


JUNK_TEXT = st.one_of(
    st.sampled_from(["", "0", "1", "-1", "-5.5", "nan", "inf", "1e400", "open", "closed", "No such label", "true"]),
    st.just("9" * 4000),
    st.just("-" + "9" * 4000),
    st.just("x" * 5000),
    st.text(max_size=40),
    st.text(max_size=10).map(lambda text: f"{text}\x00{text}"),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)
JUNK_JSON_VALUE = st.one_of(
    JUNK_TEXT,
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(int("9" * 4000)),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.lists(JUNK_TEXT, max_size=3),
    st.dictionaries(st.text(max_size=5), JUNK_TEXT, max_size=2),
)


def _path_value(draw, name: str, world: dict) -> str:
    if name == "format":
        return draw(st.sampled_from(["json", "api", "exe", "csv", "9" * 40]))
    return str(draw(st.sampled_from([*world["ids"], 0, 10**20, "x" if name != "int" else 0])))


def concrete_path(draw, route: str, world: dict) -> str:
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: _path_value(draw, m.group(1), world), route)
    path = re.sub(r"<(?:(\w+):)?(\w+)>", lambda m: _path_value(draw, m.group(1) or "str", world), path)
    return "/" + path.replace("^", "").replace("$", "").replace("/?", "/").replace("\\.", ".")


@st.composite
def junk_request(draw, route: str, names: list[str], world: dict):
    path = concrete_path(draw, route, world)
    fields = draw(st.lists(st.sampled_from(names), min_size=1, max_size=6, unique=True))
    method = draw(st.sampled_from(["post", "post", "put", "patch", "get"]))
    role = draw(st.sampled_from(["staff", "annotator", "anonymous"]))
    body_kind = draw(st.sampled_from(["form", "json", "broken-json", "wrong-type"]))
    if method == "get":
        body_kind = "query"
    if body_kind == "json":
        body = json.dumps({name: draw(JUNK_JSON_VALUE) for name in fields})
    elif body_kind in ("form", "query"):
        body = {name: draw(JUNK_TEXT) for name in fields}
    else:
        body = draw(st.sampled_from(['{"name": ', "[1, 2", "\x00", "9" * 4000, '{"a": 1e999999}']))
    return path, method, role, body_kind, body


def row_counts() -> dict[str, int]:
    """Every watched model's `_default_manager.count()`, read in one statement: the same counts as
    one query a table (about 30, twice an example, over a thousand examples), in one round trip."""
    watched = [model for model in apps.get_models() if model._meta.app_label not in UNWATCHED_APPS]
    counts, params = [], []
    for model in watched:
        sql, model_params = model._default_manager.order_by().values("pk").query.sql_with_params()
        counts.append(f"(SELECT COUNT(*) FROM ({sql}) AS counted)")
        params.extend(model_params)
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(counts), params)
        return dict(zip((model._meta.label for model in watched), cursor.fetchone(), strict=True))


def send(client: Client, method: str, path: str, body_kind: str, body):
    if method == "get":
        return client.get(path, body)
    if body_kind == "form":
        if method == "post":
            return client.post(path, body)
        from urllib.parse import urlencode

        return getattr(client, method)(path, urlencode(body), content_type="application/x-www-form-urlencoded")
    content_type = "text/plain" if body_kind == "wrong-type" else "application/json"
    return getattr(client, method)(path, body, content_type=content_type)


@pytest.fixture
def world(researcher, annotators, tiny_corpus):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=3)
    worker = worker_for_user(annotators[0])
    assignment = claim_next_hit(worker, campaign)
    # JobRun is moving between apps; find it by name so this test survives the move
    job_run = next(model for model in apps.get_models() if model.__name__ == "JobRun")
    job = job_run.objects.create(kind="export")
    ids = {campaign.pk, assignment.pk, worker.pk, job.pk, 1}
    clients = {"staff": Client(), "annotator": Client(), "anonymous": Client()}
    clients["staff"].force_login(researcher)
    clients["annotator"].force_login(annotators[0])
    assert Assignment.objects.filter(worker=worker).exists() and Worker.objects.exists()
    return {"ids": sorted(ids), "clients": clients}


NAMES = field_names()


@pytest.mark.django_db
@pytest.mark.parametrize("route", endpoints())
def test_junk_is_a_4xx_and_changes_nothing(route, world):
    @settings(PROFILE)
    @given(junk_request(route, NAMES, world))
    def check(request):
        path, method, role, body_kind, body = request
        before = row_counts()
        response = send(world["clients"][role], method, path, body_kind, body)
        assert response.status_code < 500, (path, method, role, body_kind, response.status_code)
        if response.status_code >= 400:
            assert row_counts() == before, (path, method, role, body_kind, response.status_code)

    check()


def test_the_walk_finds_the_pages_and_the_api():
    routes = endpoints()
    assert "labeling/assignments/<int:pk>/items/<int:position>/answer/" in routes
    assert any(route.startswith("api/") and "format" in route for route in routes)
    assert {"answer", "seconds", "name", "reward", "workers_per_hit"} <= set(NAMES)


def test_the_field_names_come_from_every_page_form_and_serializer_module():
    found = set(form_modules())
    assert {"labeling.pages.forms", "labeling.pages.researcher", "labeling.pages.annotator"} <= found
    assert {"labeling.api.views", "labeling.api.serializers", "labeling.api.audit", "annotation.api.views"} <= found
