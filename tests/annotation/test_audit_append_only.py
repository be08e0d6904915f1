"""The audit log refuses changes in the database itself, on SQLite (the shipped default) and on
PostgreSQL (CI): raw SQL, a bulk upsert and a fixture that would change or remove an entry all
fail, whatever code sends them; a flush still empties the table and leaves it guarded.

Runs on the database DATABASE_URL names; run it on both:
DATABASE_URL=sqlite:////tmp/audit.sqlite3 pytest tests/annotation/test_audit_append_only.py"""

import json

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from annotation.models import AuditEntry
from annotation.record import audit

REFUSED = "never updated or deleted"


@pytest.fixture
def entry(db, researcher):
    return audit.record(audit.WORKER_BLOCKED, researcher, ("worker", 7), "active", "blocked", "spam")


def _raw(statement: str, params: list) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE annotation_auditentry SET reason = 'rewritten' WHERE id = %s",
        "UPDATE annotation_auditentry SET id = id + 1000 WHERE id = %s",
        "DELETE FROM annotation_auditentry WHERE id = %s",
    ],
)
def test_raw_sql_cannot_change_or_remove_an_entry(entry, statement):
    with pytest.raises(DatabaseError, match=REFUSED):
        _raw(statement, [entry.pk])
    assert AuditEntry.objects.get(pk=entry.pk).reason == "spam"


def test_deleting_every_entry_with_raw_sql_is_refused(entry):
    with pytest.raises(DatabaseError, match=REFUSED):
        _raw("DELETE FROM annotation_auditentry", [])
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def test_a_bulk_upsert_cannot_rewrite_an_entry(entry):
    rewritten = AuditEntry(**{**_fields(entry), "reason": "rewritten"})
    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        AuditEntry.objects.bulk_create(
            [rewritten], update_conflicts=True, unique_fields=["id"], update_fields=["reason"]
        )
    assert AuditEntry.objects.get(pk=entry.pk).reason == "spam"


def test_a_fixture_cannot_rewrite_an_entry(entry, tmp_path):
    fixture = tmp_path / "rewrite.json"
    fields = {**_fields(entry), "reason": "rewritten", "at": entry.at.isoformat()}
    fields.pop("id")
    fixture.write_text(json.dumps([{"model": "annotation.auditentry", "pk": entry.pk, "fields": fields}]))
    with pytest.raises(DatabaseError, match=REFUSED):
        call_command("loaddata", str(fixture), verbosity=0)
    assert AuditEntry.objects.get(pk=entry.pk).reason == "spam"


def test_a_new_entry_is_still_written(entry):
    audit.record(audit.WORKER_UNBLOCKED, None, ("worker", 7), "blocked", "active")
    assert AuditEntry.objects.count() == 2


def test_the_guard_is_installed_on_this_database(db):
    assert _guards(), f"no append-only trigger on annotation_auditentry ({connection.vendor})"


@pytest.mark.django_db(transaction=True)
def test_a_flush_empties_the_log_and_leaves_it_guarded(researcher):
    """A transactional test ends with a flush (SQLite: DELETE of every row, past the triggers that
    config.sqlite lifts and puts back in the same transaction; PostgreSQL: TRUNCATE)."""
    before = _guards()
    audit.record(audit.WORKER_BLOCKED, researcher, ("worker", 7), "active", "blocked", "spam")
    call_command("flush", interactive=False, verbosity=0)
    assert not AuditEntry.objects.exists()
    assert _guards() == before
    written = audit.record(audit.WORKER_BLOCKED, None, ("worker", 8), "active", "blocked")
    with pytest.raises(DatabaseError, match=REFUSED):
        _raw("DELETE FROM annotation_auditentry WHERE id = %s", [written.pk])


def _fields(entry: AuditEntry) -> dict:
    return {field.attname: getattr(entry, field.attname) for field in AuditEntry._meta.concrete_fields}


def _guards() -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'annotation_auditentry'"
            )
        else:
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = 'annotation_auditentry'::regclass AND NOT tgisinternal"
            )
        return sorted(name for (name,) in cursor.fetchall())
