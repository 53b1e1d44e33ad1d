"""Long CSV / JSONL: one line per answer, ``item, rater, field, value``, optionally a time
(``timestamp``), a time on task (``duration_ms``, or ``lead_time`` in seconds) and annotator
attributes (any other column, e.g. ``nationality``; ``rater.nationality`` reads the same).
The item column is named ``item`` or after the item key itself (``pair_id``); the annotator's
``rater`` or ``annotator``; the field's ``field`` or ``question``. A question asked per element
of a list may be answered per element as ``q[1]``, ``q[2]``, ... The lines of one annotator and
item make one rating, wherever they are in the file."""

from __future__ import annotations

from typing import Any

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

FIELD_COLUMNS = ("field", "question")
VALUE_COLUMN = "value"


def read(text: TextSource, *, jsonl: bool, item_key: str, problem: Problem, counts: ReadCounts) -> list[SourceRating]:
    ratings: dict[tuple[str, str], SourceRating] = {}
    attributes: dict[str, tuple[dict[str, Any], str]] = {}  # rater -> (attributes, where first given)
    columns, rows = table_rows(text, jsonl=jsonl, problem=problem)
    counts.columns = columns
    roles_of: dict[tuple[str, ...], tuple] = {}
    # the CSV's columns, whatever cells a row leaves empty; a JSONL line names its own
    header: tuple[str, ...] | None = tuple(columns) if not jsonl else None
    for line_no, row in rows:
        counts.records += 1
        where = f"line {line_no}"
        names = header if header is not None else tuple(row)
        roles = roles_of.get(names)
        if roles is None:
            item_col = item_key if item_key in names else ITEM_COLUMN
            rater_col = first_present(RATER_COLUMNS, list(names)) or RATER_COLUMNS[0]
            field_col = first_present(FIELD_COLUMNS, list(names)) or FIELD_COLUMNS[0]
            time_col = first_present(TIMESTAMP_COLUMNS, list(names))
            ms_col = first_present(DURATION_MS_COLUMNS, list(names))
            s_col = first_present(DURATION_S_COLUMNS, list(names))
            used = {item_col, rater_col, field_col, VALUE_COLUMN, time_col, ms_col, s_col}
            roles = roles_of[names] = (item_col, rater_col, field_col, time_col, ms_col, s_col, used)
        item_col, rater_col, field_col, time_col, ms_col, s_col, roles_used = roles
        missing = [c for c in (item_col, rater_col, field_col) if c not in row]
        if missing:
            problem(
                where, f"no {', '.join(repr(c) for c in missing)} (each line needs the item, the rater and the field)"
            )
            continue
        key, rater, field_name = text_of(row[item_col]), text_of(row[rater_col]), str(row[field_col]).strip()
        pair = (key, rater)
        rating = ratings.get(pair)
        if rating is None:
            rating = ratings[pair] = SourceRating(where=where, key=key, rater=rater, origins={})
        if field_name in rating.answers or field_name in rating.origins:
            problem(
                where,
                f"duplicate answer: rater {rater!r} already answered {field_name!r} for item {key!r} "
                f"on {rating.origins[field_name]}",
            )
            continue
        rating.origins[field_name] = where
        if VALUE_COLUMN in row:
            rating.answers[field_name] = row[VALUE_COLUMN]
            counts.saw(field_name)
        try:
            if time_col and time_col in row and rating.submitted_at is None:
                rating.submitted_at = parse_time(row[time_col])
            if ms_col and ms_col in row and rating.duration_ms is None:
                rating.duration_ms = duration_ms(row[ms_col], seconds=False)
            elif s_col and s_col in row and rating.duration_ms is None:
                rating.duration_ms = duration_ms(row[s_col], seconds=True)
        except ValueError as exc:
            problem(where, str(exc))
        given = {attribute_name(c) or c: v for c, v in row.items() if c not in roles_used}
        if given:
            known, first = attributes.setdefault(rater, ({}, where))
            for name, value in given.items():
                if name in known and known[name] != value:
                    problem(
                        where,
                        f"rater {rater!r} has {name} {value!r} here but {known[name]!r} on {first}",
                    )
                else:
                    known[name] = value
    for rating in ratings.values():
        rating.attributes = dict(attributes.get(rating.rater, ({}, ""))[0])
    return list(ratings.values())


def read_csv(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> list[SourceRating]:
    return read(text, jsonl=False, item_key=item_key, problem=problem, counts=counts)


def read_jsonl(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> list[SourceRating]:
    return read(text, jsonl=True, item_key=item_key, problem=problem, counts=counts)


CSV = Reader("csv", _("Long CSV (item, rater, field, value)"), HUMAN, ".csv", read_csv, reads_stream=True)
JSONL = Reader("jsonl", _("Long JSONL (item, rater, field, value)"), HUMAN, ".jsonl", read_jsonl, reads_stream=True)
