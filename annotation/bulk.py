"""Writing many rows fast: plain tuples straight to the database (COPY on PostgreSQL,
``executemany`` elsewhere), bypassing model instances. Used by imports, where building
hundreds of thousands of model objects would cost more than the database work itself.

Callers pass values already in database form (JSON as text); constraints still apply."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """Primary keys for ``count`` new rows, taken from the table's sequence. Must run inside
    the transaction that inserts the rows (on SQLite that transaction holds the write lock)."""
    if count <= 0:
        return []
    table = model._meta.db_table
    pk = model._meta.pk.column
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)", [table, pk, count]
            )
            return [row[0] for row in cur.fetchall()]
        if connection.vendor == "sqlite":
            cur.execute(f"SELECT COALESCE(MAX({_quote(pk)}), 0) FROM {_quote(table)}")
            start = cur.fetchone()[0]
            cur.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
            row = cur.fetchone()
            start = max(start, row[0] if row else 0)
            return list(range(start + 1, start + 1 + count))
    raise NotImplementedError(f"reserve_ids does not support {connection.vendor}")


def insert_rows(
    model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]], *, batch: int = 5000
) -> int:
    """Insert tuples whose values follow ``columns`` (model field names). Returns the count."""
    meta = model._meta
    db_columns = [meta.get_field(name).column for name in columns]
    table = _quote(meta.db_table)
    column_sql = ", ".join(_quote(c) for c in db_columns)
    count = 0
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            with cur.cursor.copy(f"COPY {table} ({column_sql}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
            return count
        sql = f"INSERT INTO {table} ({column_sql}) VALUES ({', '.join(['%s'] * len(db_columns))})"
        chunk: list[Sequence[Any]] = []
        for row in rows:
            chunk.append(row)
            if len(chunk) >= batch:
                cur.executemany(sql, chunk)
                count += len(chunk)
                chunk = []
        if chunk:
            cur.executemany(sql, chunk)
            count += len(chunk)
    return count
