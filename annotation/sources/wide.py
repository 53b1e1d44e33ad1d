"""Wide CSV, as survey tools write it: one row per annotator and item, one column per question.
Columns: the item (``item``, or named after the item key, e.g. ``pair_id``), the annotator
(``rater`` or ``annotator``), optionally ``timestamp``, ``duration_ms`` or ``lead_time``
(seconds), annotator attributes as ``rater.<name>`` (``rater.nationality``); every other column
is a source field (a rubric question by name, ``q[n]`` for the n-th element of a repeated
question, or mapped). An empty cell is no answer."""

from __future__ import annotations

from collections.abc import Iterator

from django.utils.translation import gettext_lazy as _

from .common import (
    DURATION_MS_COLUMNS,
    DURATION_S_COLUMNS,
    HUMAN,
    ITEM_COLUMN,
    RATER_COLUMNS,
    TIMESTAMP_COLUMNS,
    Expected,
    Problem,
    ReadCounts,
    Reader,
    SourceRating,
    TextSource,
    attribute_name,
    duration_ms,
    first_present,
    parse_time,
    table_rows,
    text_of,
)


def read(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected | None = None
) -> Iterator[SourceRating]:
    """The ratings, a row at a time (the file is never read whole: issue 37, M3)."""
    header, rows = table_rows(text, jsonl=False, problem=problem)
    if not header:
        return
    counts.columns = header
    item_col = item_key if item_key in header else ITEM_COLUMN
    rater_col = first_present(RATER_COLUMNS, header)
    missing = [c for c, found in ((item_col, item_col in header), ("rater", rater_col)) if not found]
    if missing:
        problem("line 1", f"the header has no {' or '.join(repr(m) for m in missing)} column")
        return
    time_col = first_present(TIMESTAMP_COLUMNS, header)
    ms_col = first_present(DURATION_MS_COLUMNS, header)
    s_col = first_present(DURATION_S_COLUMNS, header)
    roles = {item_col, rater_col, time_col, ms_col, s_col}
    attribute_cols = {c: name for c in header if c not in roles and (name := attribute_name(c))}
    field_cols = [c for c in header if c not in roles and c not in attribute_cols and c]
    for line, row in rows:  # the row's non-empty cells: an empty cell is no answer
        counts.records += 1
        where = f"line {line}"
        key, rater = row.get(item_col, "").strip(), row.get(rater_col, "").strip()
        if not key or not rater:
            problem(where, f"no {'item' if not key else 'rater'}")
            continue
        rating = SourceRating(where=where, key=text_of(key), rater=text_of(rater))
        for c in field_cols:
            if c in row:
                rating.answers[c] = row[c]
                counts.saw(c)
        rating.attributes = {name: row[c] for c, name in attribute_cols.items() if c in row}
        try:
            if time_col:
                rating.submitted_at = parse_time(row.get(time_col))
            if ms_col and ms_col in row:
                rating.duration_ms = duration_ms(row[ms_col], seconds=False)
            elif s_col:
                rating.duration_ms = duration_ms(row.get(s_col), seconds=True)
        except ValueError as exc:
            problem(where, str(exc))
            continue
        yield rating


READER = Reader("wide", _("Wide CSV (one row per rater and item)"), HUMAN, ".csv", read, reads_stream=True)
