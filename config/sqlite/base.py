"""Django's SQLite backend, with one change: a flush empties a table its row triggers guard.

Some tables refuse changes in the database itself (annotation's audit log: a BEFORE UPDATE and a
BEFORE DELETE trigger that abort). On PostgreSQL a flush (`manage.py flush`, the end of a
transactional test) is a TRUNCATE, which fires no row trigger; on SQLite it is a DELETE of every
row, which the trigger refuses. So here a flush drops the triggers of the tables it empties and
creates them again after, in the flush's one transaction (SQLite's DDL is transactional): the
table ends empty and guarded, as after a TRUNCATE, and no other statement gets past the guard.
"""

from django.db.backends.sqlite3 import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        guards = self._triggers_on(tables) if statements else []
        drops = [f"DROP TRIGGER {self.quote_name(name)};" for name, _ in guards]
        return drops + statements + [f"{sql};" for _, sql in guards]

    def _triggers_on(self, tables) -> list[tuple[str, str]]:
        if not tables:
            return []
        marks = ", ".join("%s" for _ in tables)
        with self.connection.cursor() as cursor:
            cursor.execute(
                f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({marks}) ORDER BY name",
                list(tables),
            )
            return list(cursor.fetchall())


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
