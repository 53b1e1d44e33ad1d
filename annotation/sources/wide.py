"""Wide CSV, as survey tools write it: one row per annotator and item, one column per question.
Columns: the item (``item``, or named after the item key, e.g. ``pair_id``), the annotator
(``rater`` or ``annotator``), optionally ``timestamp``, ``duration_ms`` or ``lead_time``
(seconds), annotator attributes as ``rater.<name>`` (``rater.nationality``); every other column
is a source field (a rubric question by name, ``q[n]`` for the n-th element of a repeated
question, or mapped). An empty cell is no answer."""

from __future__ import annotations

import io

from .common import (
    DURATION_MS_COLUMNS,
    DURATION_S_COLUMNS,
    ITEM_COLUMN,
    RATER_COLUMNS,
    TIMESTAMP_COLUMNS,
    Problem,
    ReadCounts,
    SourceRating,
    attribute_name,
    csv_table,
    duration_ms,
    first_present,
    parse_time,
    text_of,
)


def read(stream: io.TextIOBase, *, item_key: str, problem: Problem, counts: ReadCounts) -> list[SourceRating]:
    table = csv_table(stream, problem)
    if table is None:
        return []
    header, rows = table
    item_col = item_key if item_key in header else ITEM_COLUMN
    rater_col = first_present(RATER_COLUMNS, header)
    missing = [c for c, found in ((item_col, item_col in header), ("rater", rater_col)) if not found]
    if missing:
        problem("line 1", f"the header has no {' or '.join(repr(m) for m in missing)} column")
        return []
    time_col = first_present(TIMESTAMP_COLUMNS, header)
    ms_col = first_present(DURATION_MS_COLUMNS, header)
    s_col = first_present(DURATION_S_COLUMNS, header)
    roles = {item_col, rater_col, time_col, ms_col, s_col}
    attribute_cols = {c: name for c in header if c not in roles and (name := attribute_name(c))}
    field_cols = [c for c in header if c not in roles and c not in attribute_cols and c]
    index = {c: i for i, c in enumerate(header)}
    out: list[SourceRating] = []
    for line, row in rows:
        counts.records += 1
        where = f"line {line}"
        key, rater = row[index[item_col]].strip(), row[index[rater_col]].strip()
        if not key or not rater:
            problem(where, f"no {'item' if not key else 'rater'}")
            continue
        rating = SourceRating(where=where, key=text_of(key), rater=text_of(rater))
        for c in field_cols:
            cell = row[index[c]]
            if cell != "":
                rating.answers[c] = cell
                counts.saw(c)
        rating.attributes = {name: row[index[c]] for c, name in attribute_cols.items() if row[index[c]] != ""}
        try:
            if time_col:
                rating.submitted_at = parse_time(row[index[time_col]])
            if ms_col and row[index[ms_col]] != "":
                rating.duration_ms = duration_ms(row[index[ms_col]], seconds=False)
            elif s_col:
                rating.duration_ms = duration_ms(row[index[s_col]], seconds=True)
        except ValueError as exc:
            problem(where, str(exc))
            continue
        out.append(rating)
    return out
