"""The audit log refuses changes in the database on SQLite too (the shipped default).

Migration 0008 installs the PostgreSQL trigger; this one gives SQLite its own pair, so a raw
UPDATE or DELETE, a bulk upsert (`bulk_create(update_conflicts=True)`: SQLite's DO UPDATE fires
the UPDATE trigger) and a fixture (`loaddata` saves an existing pk as an UPDATE) abort there as
they do on PostgreSQL. A flush (`manage.py flush`, transactional tests) still empties the table:
config.sqlite drops and re-creates these triggers around it, as PostgreSQL's TRUNCATE fires none.

A later migration that alters this table on SQLite rebuilds it (a new table, the rows copied, the
old one dropped), which drops its triggers: such a migration must run REFUSE_ON_SQLITE again
(tests/annotation/test_audit_append_only.py fails when the triggers are missing).
"""

from django.db import migrations

MESSAGE = "audit entries are never updated or deleted"
REFUSE_ON_SQLITE = [
    f"""CREATE TRIGGER annotation_auditentry_no_update BEFORE UPDATE ON annotation_auditentry
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""",
    f"""CREATE TRIGGER annotation_auditentry_no_delete BEFORE DELETE ON annotation_auditentry
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""",
]
ALLOW_ON_SQLITE = [
    "DROP TRIGGER IF EXISTS annotation_auditentry_no_update",
    "DROP TRIGGER IF EXISTS annotation_auditentry_no_delete",
]


def refuse_changes(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in REFUSE_ON_SQLITE:
            schema_editor.execute(statement)


def allow_changes(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in ALLOW_ON_SQLITE:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_audit_log"),
    ]

    operations = [
        migrations.RunPython(refuse_changes, allow_changes),
    ]
