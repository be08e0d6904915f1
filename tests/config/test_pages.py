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
    assert client.get("/corpus/").status_code == 403
    client.force_login(researcher)
    assert client.get("/corpus/").status_code == 200


@pytest.mark.django_db
def test_the_openapi_schema_is_published(client, researcher):
    client.force_login(researcher)
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content


@pytest.mark.django_db
def test_a_subtitle_file_page_lists_its_dialogues_in_two_queries_for_staff_only(
    client, researcher, annotators, django_assert_max_num_queries
):
    from annotation.models import Dialogue, Movie, SubtitleFile, Turn

    movie = Movie.objects.create(title="Harbour")
    file = SubtitleFile.objects.create(movie=movie, name="harbour.srt", format="srt", sha256="f" * 64)
    for position in range(5):
        dialogue = Dialogue.objects.create(movie=movie, file=file, position=position, content_hash=f"h{position}")
        for turn in range(2):
            Turn.objects.create(dialogue=dialogue, position=turn, text=f"line {position}.{turn}")
    client.force_login(annotators[0])
    assert client.get(f"/corpus/files/{file.pk}/").status_code == 403
    client.force_login(researcher)
    with django_assert_max_num_queries(6):  # session, user, file, dialogues, their turns
        response = client.get(f"/corpus/files/{file.pk}/")
    body = response.content.decode()
    assert body.index("line 0.1") < body.index("line 4.0")
