"""The lean annotate path (issue 15): the reads and writes of "show me the item, take my answer,
give me the next one" as a few hand-written statements, built once per process.

Why: the ORM compiled every query on every request (about 5.7 ms of each submit), the ownership
check was a joined query of its own and the session's user another one. Here:

- **the session's user is checked inside the statement that reads the assignment.** The caller
  passes the session as ``core.security.verified_session`` verified it once in this process (the
  user id, and the password hash the session hash was made from); the statement matches only
  while that user still holds what ``VerifiedSession.user_holds`` names (active, that password),
  i.e. exactly while Django would still accept the session. Whose the assignment is and what
  opening it does are the shared definitions ``ANNOTATOR_KIND`` and ``OPENS_FROM`` /
  ``OPENS_TO`` of ``annotation.models``, restated here in SQL;
- **one statement** reads the assignment with its item, project, rubric version, rater (and the
  stored answer), checks that it is the caller's own and, as asked, opens it (PostgreSQL: a
  data-modifying CTE) or locks it (``FOR UPDATE OF`` the assignment row only);
- **one statement** stores a first answer, marks the assignment submitted and finds the next one
  in the annotator's queue (PostgreSQL; three short ones on SQLite, which has no round trips);
- on PostgreSQL these are **prepared statements** (server-side binding, psycopg ``prepare=True``):
  the server parses and plans each once per connection;
- on SQLite, the hot writes of one process queue on a lock (:func:`sqlite_writes`) instead of
  polling SQLite's busy handler, whose sleeps grow to 100 ms.

Rows are converted by the ORM's own converters into model instances whose unread fields are
deferred (read on access). The store statement is built, at import, from the one writer's
definition of a submitted annotation (``annotation.writing``: its columns, from the model's
``_meta``, so a column a migration adds is still written with its default, and what its
assignment becomes). What is unusual (another way of
logging in, a refusal, a pooled slot to lock first) goes through the ordinary services and
views, which stay the reference; ``annotating`` holds the checks both paths share."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.models.base import ModelState

from benchmarks.base import STRATA_KEYS
from core.security import VerifiedSession

from . import writing
from .models import (
    ANNOTATOR_KIND,
    OPENS_FROM,
    OPENS_TO,
    QUEUE_ORDER,
    QUEUE_STATUSES,
    Annotation,
    Assignment,
    Item,
    Project,
    Rater,
    RubricVersion,
)


# ----------------------------------------------------------------------------- statements
def _execute(sql: Sequence[str], params: Sequence[Any]) -> Any:
    """Run one statement on the default connection and return its cursor. ``sql`` is the
    (PostgreSQL, SQLite) pair of texts. PostgreSQL: a server-side binding cursor (one per
    connection, kept), prepared on first use; SQLite: the driver's own statement cache. Driver
    errors become Django's, as for the ORM."""
    conn = connections[DEFAULT_DB_ALIAS]
    conn.ensure_connection()
    if conn.queries_logged:  # DEBUG, or a test counting queries: they are listed like the ORM's
        start = time.monotonic()
        try:
            return _run(conn, sql, params)
        finally:
            text = sql[0] if conn.vendor == "postgresql" else sql[1]
            conn.queries_log.append({"sql": f"{text} -- {list(params)!r}", "time": f"{time.monotonic() - start:.3f}"})
    return _run(conn, sql, params)


def _run(conn: Any, sql: Sequence[str], params: Sequence[Any]) -> Any:
    with conn.wrap_database_errors:
        raw = conn.connection
        if conn.vendor == "postgresql":
            cursor = _PG_CURSORS.get(raw)
            if cursor is None or cursor.closed:
                cursor = _pg_cursor(raw)
            cursor.execute(sql[0], params, prepare=True)
            return cursor
        return raw.execute(sql[1], params)


#: a server-side binding cursor per live psycopg connection (a cursor copies the connection's
#: adapters when made: once per connection, not per statement)
_PG_CURSORS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _pg_cursor(raw: Any) -> Any:
    """The connection's cursor for these statements, made once the connection is between
    transactions: it first sets ``plan_cache_mode = force_generic_plan`` for the session. A
    prepared statement is otherwise re-planned on every execution whenever PostgreSQL's estimate
    of the generic plan is worse than the custom ones (measured: ~1 ms of server CPU per read of
    seven joined rows, the execution itself taking 0.06 ms). Only these statements are prepared
    (Django binds parameters on the client), so the setting changes nothing else."""
    import psycopg
    from psycopg.pq import TransactionStatus

    # Django connects with prepare_threshold=None, under which psycopg prepares nothing, not even
    # on prepare=True. A threshold no query reaches: only what asks (these statements) is
    # prepared; Django's own cursors bind on the client and never prepare.
    if raw.prepare_threshold is None:
        raw.prepare_threshold = 2**31 - 1
    cursor = psycopg.Cursor(raw)
    if raw.info.transaction_status != TransactionStatus.IDLE:
        return cursor  # a SET inside a transaction would be undone by its rollback: next time
    cursor.execute("SET plan_cache_mode = force_generic_plan")
    _PG_CURSORS[raw] = cursor
    return cursor


def _both(pg: str) -> tuple[str, str]:
    """A statement's PostgreSQL text and its SQLite twin (``?`` placeholders)."""
    return pg, pg.replace("%s", "?")


_SQLITE_WRITES = threading.RLock()


def sqlite_writes() -> Any:
    """Serialise this process's hot writes on SQLite (one writer at a time anyway): threads wait
    on a lock instead of in SQLite's busy handler, whose sleeps grow to 100 ms. A no-op on
    PostgreSQL, and inside a transaction already open (it may hold SQLite's lock, which a
    holder of this one could be waiting for)."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        return nullcontext()
    return _SQLITE_WRITES


class _Columns:
    """Some columns of some models under table aliases, for a hand-written SELECT, and a row back
    as model instances, converted by the ORM's own converters (resolved once per vendor). The
    fields not read are deferred: reading one later loads it, as with ``QuerySet.only``."""

    def __init__(self, parts: Sequence[tuple[type[models.Model], str, Sequence[str]]]) -> None:
        self.parts = [(model, alias, [model._meta.get_field(name) for name in names]) for model, alias, names in parts]
        self.sql = ", ".join(f'{alias}."{f.column}"' for _model, alias, fields in self.parts for f in fields)
        self.width = sum(len(fields) for _model, _alias, fields in self.parts)
        self.attnames = [(model, [f.attname for f in fields]) for model, _alias, fields in self.parts]
        self._converters: dict[str, list[list[Any]]] = {}

    def _compiled(self, conn: Any) -> list[list[Any]]:
        found = self._converters.get(conn.vendor)
        if found is None:
            found = []
            for _model, alias, fields in self.parts:
                for f in fields:
                    col = f.get_col(alias)
                    convs = conn.ops.get_db_converters(col) + col.get_db_converters(conn)
                    found.append([(c, col) for c in convs])
            self._converters[conn.vendor] = found
        return found

    def instances(self, row: Sequence[Any]) -> list[models.Model]:
        """The row's model instances, as ``Model.from_db`` makes them but without running
        ``__init__`` field by field (no model here has ``__init__`` logic or init signals)."""
        conn = connections[DEFAULT_DB_ALIAS]
        converters = self._compiled(conn)
        alias = conn.alias
        out: list[models.Model] = []
        i = 0
        for model, attnames in self.attnames:
            values = []
            for _name in attnames:
                value = row[i]
                for conv, col in converters[i]:
                    value = conv(value, col, conn)
                values.append(value)
                i += 1
            obj = model.__new__(model)
            state = ModelState()
            state.adding, state.db = False, alias
            obj.__dict__.update(zip(attnames, values, strict=True), _state=state)
            out.append(obj)
        return out


def _table(model: type[models.Model]) -> str:
    return f'"{model._meta.db_table}"'


# ----------------------------------------------------------------------------- reading
@dataclass
class Loaded:
    """An annotator's own assignment as one statement read it: ``assignment`` has its item,
    project (with rubric version) and rater attached; ``answers`` is the stored answer when it
    is submitted; ``user`` is the session's user (only when asked for)."""

    assignment: Assignment
    answers: dict[str, Any] | None
    user: AbstractBaseUser | None
    opened: bool = False


# What the annotate requests read (each value costs a loader; timestamps are the dear ones). The
# rubric schema is left out: parsed rubrics are cached per (id, schema hash).
_FIELDS: dict[str, tuple[str, ...]] = {
    "assignment": (
        "id",
        "project",
        "item",
        "rater",
        "status",
        "purpose",
        "position",
        "presentation",
        "lease_expires_at",
        "plan",
        "opened_at",
    ),
    "item": (
        "id",
        "project",
        "external_id",
        "version",
        "data",
        *STRATA_KEYS,  # the indexed strata columns, named once (benchmarks.base)
        "meta",
    ),
    "project": (
        "id",
        "name",
        "preset_key",
        "rubric_version",
        "status",
        "k_per_item",
        "show_model_hints",
        "randomise_pair_order",
        "options",
    ),
    "rubric_version": ("id", "rubric_key", "version", "schema_hash"),
    "rater": ("id", "kind", "user", "name", "attributes"),
    "user": ("id", "password", "is_superuser", "username", "first_name", "last_name", "email", "is_staff", "is_active"),
}
_READS: dict[tuple[str, bool, bool], tuple[_Columns, tuple[str, str]]] = {}


ReadKind = Literal["read", "open", "lock"]


def _read_statement(kind: ReadKind, with_user: bool, plan_free: bool) -> tuple[_Columns, tuple[str, str]]:
    """The statement reading an assignment with everything a request needs. ``kind``: "open"
    (mark it in progress when it is assigned), "lock" (``FOR UPDATE`` of the assignment row)
    or "read"."""
    key = (kind, with_user, plan_free)
    found = _READS.get(key)
    if found is not None:
        return found
    User = get_user_model()
    parts: list[tuple[type[models.Model], str, Sequence[str]]] = [
        (Assignment, "a", _FIELDS["assignment"]),
        (Item, "i", _FIELDS["item"]),
        (Project, "p", _FIELDS["project"]),
        (RubricVersion, "rv", _FIELDS["rubric_version"]),
        (Rater, "r", _FIELDS["rater"]),
    ]
    if with_user:
        parts.append((User, "u", _FIELDS["user"]))
    cols = _Columns(parts)
    # whose it is (ANNOTATOR_KIND, as selectors.my_assignment) and that the session still holds
    # (core.security.VerifiedSession.user_holds: one parameter per field, in _SESSION_HOLDS order)
    holds = " ".join(f'AND u."{User._meta.get_field(name).column}" = %s' for name in _SESSION_HOLDS)
    owner = f'a."id" = %s AND r."user_id" = %s AND r."kind" = \'{ANNOTATOR_KIND}\' {holds}'
    if plan_free:
        owner += ' AND a."plan_id" IS NULL'
    whose = (
        f'JOIN {_table(Rater)} r ON r."id" = a."rater_id" '
        f'JOIN {_table(User)} u ON u."{User._meta.pk.column}" = r."user_id"'
    )
    what = (
        f'JOIN {_table(Project)} p ON p."id" = a."project_id" '
        f'JOIN {_table(RubricVersion)} rv ON rv."id" = p."rubric_version_id" '
        f'JOIN {_table(Item)} i ON i."id" = a."item_id" '
        f'LEFT JOIN {_table(Annotation)} an ON an."assignment_id" = a."id"'
    )
    select = f'SELECT {cols.sql}, an."answers"'
    plain = f"{select}, NULL FROM {_table(Assignment)} a {whose} {what} WHERE {owner}"
    if kind == "open":
        # The update runs in the same statement; the SELECT still sees the row as it was (one
        # snapshot), so the caller applies "opened" to what it read. SQLite: a read, then an
        # update only when the row is still assigned (load_mine).
        pg = (
            f'WITH t AS (SELECT a."id" FROM {_table(Assignment)} a {whose} WHERE {owner}), '
            f"o AS (UPDATE {_table(Assignment)} SET \"status\" = '{OPENS_TO}', "
            f'"opened_at" = %s WHERE "id" = (SELECT "id" FROM t) '
            f'AND "status" = \'{OPENS_FROM}\' RETURNING "id") '
            f'{select}, o."id" FROM t JOIN {_table(Assignment)} a ON a."id" = t."id" {whose} {what} '
            f'LEFT JOIN o ON o."id" = a."id"'
        )
        statement = (pg, plain.replace("%s", "?"))
    elif kind == "lock":
        # only the assignment row: locking the joined project would serialise a project's submits
        statement = (plain + " FOR UPDATE OF a", plain.replace("%s", "?"))
    else:
        statement = _both(plain)
    _READS[key] = (cols, statement)
    return _READS[key]


#: SQLite's open, apart from its read (PostgreSQL opens in the reading statement)
_OPEN_SQL = _both(f'UPDATE {_table(Assignment)} SET "status" = %s, "opened_at" = %s WHERE "id" = %s AND "status" = %s')
#: the user's fields a session's hold is checked on, in the order of their parameters
_SESSION_HOLDS: tuple[str, ...] = tuple(VerifiedSession(0, "", "").user_holds())


def load_mine(
    *,
    session: VerifiedSession,
    assignment_id: int,
    kind: ReadKind = "read",
    with_user: bool = False,
    plan_free: bool = False,
) -> Loaded | None:
    """The session's user's own assignment (``selectors.my_assignment``) in one statement,
    with the session's hold on its user checked in it (``core.security.VerifiedSession``); None
    when it is not theirs, or the session no longer holds. ``kind="open"`` also opens it as
    ``annotating.open_assignment`` does (without the pooled lease renewal, which the caller
    does); ``kind="lock"`` locks the row (inside a transaction); ``plan_free`` matches only
    assignments outside any plan (no slot to lock first)."""
    from django.utils import timezone

    conn = connections[DEFAULT_DB_ALIAS]
    cols, statement = _read_statement(kind, with_user, plan_free)
    now = timezone.now()
    holds = session.user_holds()
    params: list[Any] = [assignment_id, session.uid, *(holds[name] for name in _SESSION_HOLDS)]
    if kind == "open" and conn.vendor == "postgresql":
        params.append(Assignment._meta.get_field("opened_at").get_db_prep_save(now, conn))
    row = _execute(statement, params).fetchone()
    if row is None:
        return None
    made = cols.instances(row)
    assignment, item, project, rubric_version, rater = made[:5]
    user = made[5] if with_user else None
    answers_raw, opened = row[cols.width], row[cols.width + 1] is not None
    if kind == "open" and conn.vendor == "sqlite" and assignment.status == OPENS_FROM:
        with sqlite_writes():
            opened = bool(
                _execute(
                    _OPEN_SQL,
                    [
                        OPENS_TO,
                        Assignment._meta.get_field("opened_at").get_db_prep_save(now, conn),
                        assignment.pk,
                        OPENS_FROM,
                    ],
                ).rowcount
            )
    if opened or (kind == "open" and assignment.status == OPENS_FROM):
        # as open_assignment: the item counts as opened now (a lost race leaves the row as is)
        assignment.status, assignment.opened_at = OPENS_TO, now
    project.rubric_version = rubric_version
    assignment.project, assignment.item, assignment.rater = project, item, rater
    if user is not None:
        rater.user = user
    answers = None
    if answers_raw is not None and assignment.status == Assignment.Status.SUBMITTED:
        answers = Annotation._meta.get_field("answers").from_db_value(answers_raw, None, conn)
    return Loaded(assignment=assignment, answers=answers, user=user, opened=opened)


# ----------------------------------------------------------------------------- writing
def _store_statements() -> dict[str, str]:
    """The statements of a first submission, from the one writer's definition
    (``annotation.writing``: the annotation's columns and what its assignment becomes), built
    once at import."""
    insert, update = writing.INSERT_SQL, writing.MARK_SUBMITTED_SQL
    probe = queue_probe(_table(Assignment), but_not=True)
    lite = "SELECT COALESCE((" + probe + "), (" + probe + "))"
    return {
        # PostgreSQL: one round trip stores, marks submitted and probes the queue (each probe is
        # an index range scan on (rater, project, status, position) stopping at the first row;
        # the statement's snapshot still shows this assignment open, hence "id <> this one").
        "pg_store": (
            f'WITH ins AS ({insert} RETURNING "id"), upd AS ({update}) '
            f'SELECT (SELECT "id" FROM ins), COALESCE(({probe}), ({probe}))'
        ),
        "pg_store_only": f'WITH ins AS ({insert} RETURNING "id"), upd AS ({update}) SELECT (SELECT "id" FROM ins)',
        "lite_insert": insert.replace("%s", "?"),
        "lite_update": update.replace("%s", "?"),
        "lite_probe": lite.replace("%s", "?"),
    }


@dataclass
class Stored:
    """A stored answer, and the next assignment of the queue when the caller asked for it."""

    annotation: Annotation
    next_id: int | None = None
    probed: bool = False


def insert_first_answer(
    *,
    assignment: Assignment,
    rater: Rater,
    rubric_version: RubricVersion,
    answers: dict[str, Any],
    derived: dict[str, Any],
    duration_ms: int | None,
    now: datetime,
    probe_next: bool,
    locale: str = "",
) -> Stored:
    """Insert the annotation of a first submission and mark its assignment submitted, as
    ``annotation.writing`` defines both (the caller holds the row lock, inside a transaction);
    with ``probe_next``, also find the next assignment of the rater's own queue
    (``studies.next_item.next_in_queue``)."""
    conn = connections[DEFAULT_DB_ALIAS]
    sub = writing.Submission(
        assignment_id=assignment.pk,
        item_id=assignment.item_id,
        rater_id=rater.pk,
        rubric_version_id=rubric_version.pk,
        answers=answers,
        derived=derived,
        at=now,
        duration_ms=duration_ms,
        locale=locale,
    )
    values = writing.insert_params(sub, conn)
    update = writing.mark_submitted_params(assignment.pk, now, conn)
    # the queue's head after this one: a probe per status, in the queue's order (queue_probe)
    probes = [v for status in QUEUE_STATUSES for v in (rater.pk, assignment.project_id, status, assignment.pk)]
    next_id = None
    if conn.vendor == "postgresql":
        if probe_next:
            ann_id, next_id = _execute((_WRITES["pg_store"], ""), [*values, *update, *probes]).fetchone()
        else:
            (ann_id,) = _execute((_WRITES["pg_store_only"], ""), [*values, *update]).fetchone()
    else:
        ann_id = _execute(("", _WRITES["lite_insert"]), values).lastrowid
        _execute(("", _WRITES["lite_update"]), update)
        if probe_next:
            (next_id,) = _execute(("", _WRITES["lite_probe"]), probes).fetchone()
    annotation = writing.stored(sub, ann_id, using=conn.alias)
    annotation.rater, annotation.rubric_version = rater, rubric_version
    return Stored(annotation=annotation, next_id=next_id, probed=probe_next)


# ----------------------------------------------------------------------------- small reads
_SMALL: dict[str, tuple[str, str]] = {}


def _small(name: str) -> tuple[str, str]:
    found = _SMALL.get(name)
    if found is not None:
        return found
    asg = _table(Assignment)
    probe = queue_probe(asg)
    texts = {
        "queue_head": f"SELECT COALESCE(({probe}), ({probe}))",
        "lock_status": f'SELECT "status", "rater_id" FROM {asg} WHERE "id" = %s FOR UPDATE',
        "queue_counts": (
            f'SELECT "status", COUNT(*) FROM {asg} WHERE "rater_id" = %s AND "project_id" = %s '
            f'AND "status" <> %s GROUP BY "status"'
        ),
    }
    for key, text in texts.items():
        lite = text.replace(" FOR UPDATE", "") if key == "lock_status" else text
        _SMALL[key] = (text, lite.replace("%s", "?"))
    return _SMALL[name]


def queue_probe(table: str, *, but_not: bool = False) -> str:
    """The first assignment of one status in a rater's queue (parameters: rater, project,
    status[, an id to pass over]), in :data:`~annotation.models.QUEUE_ORDER`: an index range
    scan on (rater, project, status, position) that stops at its first row. Two of these, one
    per status of :data:`~annotation.models.QUEUE_STATUSES`, make the queue's head."""
    order = ", ".join(f'"{column}"' for column in QUEUE_ORDER)
    other = ' AND "id" <> %s' if but_not else ""
    return (
        f'SELECT "id" FROM {table} WHERE "rater_id" = %s AND "project_id" = %s AND "status" = %s{other} '
        f"ORDER BY {order} LIMIT 1"
    )


def queue_head(rater_id: int, project_id: int) -> int | None:
    """The id of the rater's next open assignment in the project, in queue order: one already
    opened first, then the next assigned one by position (two index range scans on (rater,
    project, status, position), each stopping at its first row, in one statement)."""
    params = [value for status in QUEUE_STATUSES for value in (rater_id, project_id, status)]
    return _execute(_small("queue_head"), params).fetchone()[0]


def lock_status(assignment_id: int) -> tuple[str, int] | None:
    """Lock an assignment row (``FOR UPDATE`` of that row only; SQLite: the transaction holds
    the database's write lock) and read its status and rater."""
    row = _execute(_small("lock_status"), [assignment_id]).fetchone()
    return None if row is None else (row[0], row[1])


def queue_counts(rater_id: int, project_id: int) -> dict[str, int]:
    """How many of the rater's assignments in the project are in each status, expired ones left out."""
    rows = _execute(_small("queue_counts"), [rater_id, project_id, Assignment.Status.EXPIRED]).fetchall()
    return dict(rows)


#: the first submission's statements, built once when this module is imported (not per request)
_WRITES: dict[str, str] = _store_statements()
