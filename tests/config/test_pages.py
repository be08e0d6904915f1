import pytest


@pytest.mark.django_db
def test_healthz_answers(client):
    assert client.get("/healthz").json() == {"ok": True}


@pytest.mark.django_db
def test_home_sends_anonymous_visitors_to_log_in(client):
    response = client.get("/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_the_corpus_page_is_for_staff_only(client, researcher, annotators):
    client.force_login(annotators[0])
    assert client.get("/corpus/").status_code == 302
    client.force_login(researcher)
    assert client.get("/corpus/").status_code == 200


@pytest.mark.django_db
def test_the_openapi_schema_is_published(client, researcher):
    client.force_login(researcher)
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
