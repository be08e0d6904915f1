"""The client against the OpenAPI schema the server serves (/api/schema/): every endpoint it calls
is there with its method, and every field its dataclasses read is a property of the component it
names. A renamed or removed endpoint or field fails here, in CI, before a researcher's script."""

import pytest
from dialogue_curation_client.client import ENDPOINTS
from dialogue_curation_client.models import Campaign, FromJson, Job, Progress, StudyReport, Table4

MODELS: list[type[FromJson]] = [Campaign, Job, Progress, StudyReport, Table4]


@pytest.fixture
def schema(admin_client) -> dict:
    response = admin_client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def drift(schema: dict, endpoints: dict[str, tuple[str, str]], models: list[type[FromJson]]) -> list[str]:
    """What the client calls or reads that the schema does not serve, one line each."""
    problems = [
        f"{name}: {method.upper()} {path} is not in the schema"
        for name, (method, path) in endpoints.items()
        if method not in schema["paths"].get(path, {})
    ]
    components = schema["components"]["schemas"]
    for model in models:
        properties = components.get(model.COMPONENT, {}).get("properties", {})
        problems += [
            f"{model.__name__}.{name}: no {model.COMPONENT}.{name}"
            for name in model.schema_fields()
            if name not in properties
        ]
    return problems


@pytest.mark.django_db
def test_every_endpoint_and_field_the_client_reads_is_served(schema):
    assert drift(schema, ENDPOINTS, MODELS) == []


@pytest.mark.django_db
def test_a_drifted_endpoint_or_field_is_caught(schema):
    from dataclasses import dataclass
    from typing import ClassVar

    @dataclass(frozen=True)
    class Renamed(FromJson):
        COMPONENT: ClassVar[str] = "Campaign"
        id: int
        title: str

    endpoints = {"gone": ("get", "/api/campaigns/{id}/summary/"), "wrong_method": ("delete", "/api/campaigns/")}
    assert drift(schema, endpoints, [Renamed]) == [
        "gone: GET /api/campaigns/{id}/summary/ is not in the schema",
        "wrong_method: DELETE /api/campaigns/ is not in the schema",
        "Renamed.title: no Campaign.title",
    ]
