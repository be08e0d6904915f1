"""Model rows read by SQL written once, for the few reads every request makes, and the cursor
such SQL runs on (`cursor`: prepared statements on PostgreSQL).

The ORM compiles a query anew on each call: for a one-row read by key that is 0.5 to 2 ms of
CPU, several times PostgreSQL's own work. `fetch_one` reads a row with SQL built once per
model and condition, and turns it into an instance the way the ORM does (`Model.from_db`, after
the database converters: JSON text, SQLite's dates and decimals), so the caller cannot tell.
"""

import inspect
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.utils import CursorWrapper
from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.signals import post_init, pre_init


def is_key(value: int) -> bool:
    """Whether an id (from a URL, say) can be a row's key at all: a 64-bit integer. The ORM finds
    no row for a bigger one; raw SQL on SQLite raises OverflowError instead."""
    return -(2**63) <= value < 2**63


def fields(model) -> list:
    return list(model._meta.concrete_fields)


def columns(model, alias: str) -> list[str]:
    """The model's columns, quoted, as `alias.column`, in `fields` order."""
    quote = connection.ops.quote_name
    return [f"{alias}.{quote(field.column)}" for field in fields(model)]


@cache
def _loaders(model) -> tuple[list[str], list[tuple]]:
    """The model's attribute names and, per field, the converters the ORM applies to what the
    driver returns, with the column they take."""
    names, converters = [], []
    for field in fields(model):
        column = field.get_col(model._meta.db_table)
        names.append(field.attname)
        converters.append((connection.ops.get_db_converters(column) + field.get_db_converters(connection), column))
    return names, converters


def build(model, values):
    """An instance of `model` from its columns' values in `fields` order, as the ORM builds it."""
    names, converters = _loaders(model)
    db = connections[DEFAULT_DB_ALIAS]
    converted = []
    for value, (functions, column) in zip(values, converters, strict=True):
        for function in functions:
            value = function(value, column, db)
        converted.append(value)
    if not _plain(model) or pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(DEFAULT_DB_ALIAS, names, converted)
    return _filled(model, zip(names, converted, strict=True))


def copy_of(instance):
    """A saved instance of a plain model (see _plain) with `instance`'s field values and nothing
    else: no related object cached on it, a state of its own."""
    names = _loaders(type(instance))[0]
    return _filled(type(instance), ((name, instance.__dict__[name]) for name in names if name in instance.__dict__))


def _filled(model, values):
    """What Model.from_db ends with for a model that adds nothing to it: Model.__init__ sets each
    value with setattr, which for a plain model's fields is a write to __dict__ (a foreign key's id
    descriptor only clears a cached related object, which a new instance has not), then the state;
    here in one update, at a fraction of the CPU (several instances on every request). `values`:
    (attribute name, value) pairs."""
    instance = model.__new__(model)
    instance.__dict__.update(values)
    state = instance._state = ModelState()
    state.adding, state.db = False, DEFAULT_DB_ALIAS
    return instance


@cache
def _plain(model) -> bool:
    """Whether Model.from_db builds `model`'s instances by Model.__init__ with no more to it: neither
    is overridden, and no column's attribute has a descriptor that acts on a write (a file field's,
    say) other than a foreign key id's. Its init signals have no receivers: build asks per call."""
    if model.from_db.__func__ is not Model.from_db.__func__ or model.__init__ is not Model.__init__:
        return False
    for name in _loaders(model)[0]:
        descriptor = inspect.getattr_static(model, name, None)
        if hasattr(type(descriptor), "__set__") and not isinstance(descriptor, ForeignKeyDeferredAttribute):
            return False
    return True


@cache
def _select(model, where: str) -> str:
    table = connection.ops.quote_name(model._meta.db_table)
    return f"SELECT {', '.join(columns(model, 't'))} FROM {table} t WHERE {where}"


def fetch_one(model, where: str, params: list):
    """The first row of `model` matching `where` (SQL over the table aliased `t`, %s
    placeholders), as an instance; None when there is none."""
    with cursor() as reading:
        reading.execute(_select(model, where), params)
        row = reading.fetchone()
    return None if row is None else build(model, row)


@cache
def _select_joined(model, field_name: str, where: str) -> str:
    field = model._meta.get_field(field_name)
    related = field.related_model
    quote = connection.ops.quote_name
    table, related_table = quote(model._meta.db_table), quote(related._meta.db_table)
    target = quote(field.target_field.column)
    return (
        f"SELECT {', '.join(columns(model, 't') + columns(related, 'r'))} FROM {table} t "
        f"LEFT JOIN {related_table} r ON r.{target} = t.{quote(field.column)} WHERE {where}"
    )


def fetch_one_joined(model, field_name: str, where: str, params: list):
    """As `fetch_one`, with the row the foreign key `field_name` points at read by the same
    statement (a LEFT JOIN, aliased `r`): (instance, related instance or None), or (None, None)."""
    with cursor() as reading:
        reading.execute(_select_joined(model, field_name, where), params)
        row = reading.fetchone()
    if row is None:
        return None, None
    own = len(fields(model))
    related_model = model._meta.get_field(field_name).related_model
    related = None if row[own + _pk_index(related_model)] is None else build(related_model, row[own:])
    return build(model, row[:own]), related


def _pk_index(model) -> int:
    return fields(model).index(model._meta.pk)


def cursor():
    """A cursor for SQL written once (this module's reads, labeling.fast_path.compiled's). On PostgreSQL
    with prepared statements on (the database OPTIONS' prepare_threshold, settings
    DB_PREPARED_STATEMENTS), one that binds its parameters on the server, so psycopg prepares each
    such statement on a connection once it ran there prepare_threshold times (0: on its first run,
    planned generically from then on: plan_cache_mode in the settings), and PostgreSQL stops
    planning it on every call (it plans the claim's search in ~4 ms and runs it in 0.2). Django's
    wrapper stays around it: its execute wrappers and error translation apply as to any Django
    cursor. While Django logs queries (DEBUG, a test capturing them) it binds on the client as
    before: the log then shows each statement with its values, which it cannot read back from a
    prepared one. The server-binding cursor is one per connection (_KeptCursor): read its results
    inside the `with` block."""
    db = connections[DEFAULT_DB_ALIAS]  # once: `connection` looks the wrapper up on every attribute
    prepares = db.settings_dict["OPTIONS"].get("prepare_threshold") is not None
    if db.vendor != "postgresql" or not prepares or db.queries_logged:
        return db.cursor()
    db.ensure_connection()
    db.validate_thread_sharing()
    raw = db.connection
    kept, zone = getattr(db, "_rows_kept", None), raw.info.timezone
    if kept is None or kept[0] is not raw or kept[1].closed or kept[2] != zone:
        # made anew for a new connection, and if the session's time zone moved (its timestamp loader)
        kept = db._rows_kept = (raw, _server_binding_cursor(db, raw), zone)
    elif getattr(db, "_rows_kept_busy", False):
        # a statement run while the kept cursor's is still read: a cursor of its own, closed after
        return db.make_cursor(_server_binding_cursor(db, raw))
    db._rows_kept_busy = True
    return _KeptCursor(kept[1], db)


class _KeptCursor(CursorWrapper):
    """The connection's one cursor for SQL written once, wrapped as Django wraps any: made once
    per connection rather than per statement (a psycopg cursor, its loaders, and the timestamp
    loader set on it, on every statement of every request), and handed back, not closed, at the
    end of its `with` block. Its results are read inside that block, as every caller here does."""

    def close(self):
        self.db._rows_kept_busy = False


def _server_binding_cursor(db, raw):
    server_binding, timestamptz, text, register_tzloader, plain_loader = _postgresql()
    bound = server_binding(raw)
    if db.timezone is not None and raw.info.timezone == db.timezone:
        # psycopg's own loader already gives Django's value (the session's time zone is Django's:
        # Django sets it on connecting), and in C: Django's loader parses each timestamp in Python
        # to replace a tzinfo by an equal one, several times on every request's reads
        bound.adapters.register_loader(timestamptz, plain_loader)
    elif db.timezone != raw.adapters.get_loader(timestamptz, text).timezone:
        register_tzloader(db.timezone, bound)  # as Django's own cursors (create_cursor)
    return bound


@cache
def _postgresql():
    """What `cursor` needs of the PostgreSQL backend, imported on first use (SQLite has no psycopg)."""
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID, ServerBindingCursor
    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg.pq import Format
    from psycopg.types.datetime import TimestamptzLoader

    return ServerBindingCursor, TIMESTAMPTZ_OID, Format.TEXT, register_tzloader, TimestamptzLoader
