"""Label Studio's flat exports: ``JSON_MIN`` (a list of records) and ``CSV`` (one row per record),
as written by Label Studio's converter (``label_studio_sdk.converter``: ``convert_to_json_min``,
``exports/csv2.py``). One record per annotation that was not cancelled: the task's ``data``
fields, one column per control (its ``from_name``) holding the *prettified* result, and
``annotator`` (the e-mail when Label Studio knows the user as an object, else the user id; an
e-mail is kept only as a digest, :func:`source_rater`),
``annotation_id``, ``created_at``, ``updated_at``, ``lead_time`` (seconds); optionally
``agreement``, ``history`` and a ``<control>_transcript`` for chats. A task without annotations
gives a record with an empty ``annotator``: skipped and counted.

How the converter prettifies a control's results (``converter.utils.prettify_result``), read back
here: one choice -> the choice (text); several -> ``{"choices": [...]}``; one text area line ->
the text, several -> ``{"text": [...]}`` (the lines joined); a rating, number or pairwise result
-> ``[{"rating": 4}]``, ``[{"number": 3}]``, ``[{"selected": "left"}]``; regions -> a list of
``{"start", "end", "labels": [...]}`` (the labels of all regions once each: a checklist). In the
CSV every non-text value is that JSON as text.

Which columns are task data rather than answers is not written in the file; the import leaves
out the columns named after a field of the project's items (:func:`task_data_columns`), and a
task's ``data`` key colliding with a control is written ``_data_<key>`` by the CSV export.

The ``id`` column: in JSON_MIN it is Label Studio's task id (the converter writes it over a
``data.id``); in the CSV the task's ``data.id`` when there is one, else the task id."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.utils.translation import gettext_lazy as _

from core.values import loads

from .common import (
    HUMAN,
    NOT_JSON,
    Expected,
    Problem,
    ReadCounts,
    Reader,
    SourceRating,
    TextSource,
    as_stream,
    csv_table,
    duration_ms,
    load_json,
    parse_time,
    text_of,
    whole_text,
)
from .labelstudio import item_key_of

#: the columns the converter adds around the task data and the controls
META_COLUMNS = ("annotator", "annotation_id", "created_at", "updated_at", "lead_time", "agreement", "history")
#: a task data key that collides with a control's name, as the CSV export renames it
DATA_PREFIX = "_data_"
#: the one key of a prettified single result, by control type
SCALAR_KEYS = ("rating", "number", "selected")


def decode_result(value: Any) -> Any:
    """A control's prettified result as the raw answer the import coerces: the choice, the
    choices, the text, the rating / number / side, or the labels of all regions."""
    if isinstance(value, dict):
        if isinstance(value.get("choices"), list):
            return value["choices"]
        if isinstance(value.get("text"), list):
            return "\n".join(str(t) for t in value["text"])
        return value
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        if len(value) == 1:
            for key in SCALAR_KEYS:
                if key in value[0]:
                    return value[0][key]
        labels: list[Any] = []
        for region in value:
            found = next((region[k] for k in region if k.endswith("labels") and isinstance(region[k], list)), None)
            if found is None:
                found = region.get("choices") if isinstance(region.get("choices"), list) else None
            if found is None:
                return value
            labels.extend(x for x in found if x not in labels)
        return labels
    return value


def decode_cell(cell: str) -> Any:
    """A CSV cell: the converter writes every result that is not one choice or one line of text
    as JSON; a cell that does not read as one of its shapes is kept as text."""
    text = cell.strip()
    if text[:1] in "[{":
        try:
            parsed = loads(text)
        except (json.JSONDecodeError, RecursionError):
            return cell
        decoded = decode_result(parsed)
        if decoded is not parsed:
            return decoded
    return cell


def source_rater(annotator: Any) -> str:
    """The annotator's source id: Label Studio's user id, or, where the export gives the user's
    e-mail, a digest of it (the e-mail itself is never stored; the same address is the same rater
    in every later import of the project)."""
    text = text_of(annotator)
    if "@" in text:
        return "email-sha256:" + hashlib.sha256(text.casefold().encode("utf-8")).hexdigest()[:20]
    return text


def _records(
    rows: Iterable[tuple[str, dict[str, Any]]],
    *,
    item_key: str,
    decode: Any,
    problem: Problem,
    counts: ReadCounts,
) -> Iterator[SourceRating]:
    for where, record in rows:
        counts.records += 1
        annotator = record.get("annotator")
        if annotator is None or annotator == "":
            counts.skipped_empty += 1  # a task nobody annotated
            continue
        counts.saw_data({k: v for k, v in record.items() if k not in META_COLUMNS})
        key = item_key_of(record, item_key)  # as the full export reads a task's data
        if key is None or key == "":
            counts.missing_key.append(where)  # reported by the import, once, with the keys there are
            continue
        rating = SourceRating(where=where, key=text_of(key), rater=source_rater(annotator))
        for name, value in record.items():
            if (
                name in META_COLUMNS
                or name in (item_key, "id")  # "id": the task's (or its data's) id, never an answer
                or name.startswith(DATA_PREFIX)
                or name.endswith("_transcript")
                or value is None
                or value == ""
            ):
                continue
            rating.answers[name] = decode(value)
            counts.saw(name)
        try:
            rating.duration_ms = duration_ms(record.get("lead_time"), seconds=True)
            rating.submitted_at = parse_time(record.get("updated_at") or record.get("created_at"))
        except ValueError as exc:
            problem(where, str(exc))
            continue
        yield rating


def read_json_min(text: str, *, item_key: str, problem: Problem, counts: ReadCounts) -> list[SourceRating]:
    """Label Studio's ``JSON_MIN`` export: a list of flat records."""
    records = load_json(text, problem)
    if records is NOT_JSON:
        return []
    if not isinstance(records, list):
        problem("line 1", "a Label Studio JSON-MIN export is a list of records")
        return []
    if any(isinstance(r, dict) and isinstance(r.get("data"), dict) and "annotations" in r for r in records):
        problem(
            "line 1",
            "this is Label Studio's full JSON export (tasks with 'annotations'): choose the format "
            "Label Studio JSON export (labelstudio)",
        )
        return []

    def rows() -> Iterator[tuple[str, dict[str, Any]]]:
        for i, record in enumerate(records):
            if not isinstance(record, dict):
                problem(f"record #{i + 1}", "a record must be an object")
                continue
            ids = [
                f"{name} {text_of(record[name])}" for name in ("id", "annotation_id") if record.get(name) is not None
            ]
            yield f"record #{i + 1}" + (f" ({', '.join(ids)})" if ids else ""), record

    return list(_records(rows(), item_key=item_key, decode=decode_result, problem=problem, counts=counts))


def read_csv(stream: io.TextIOBase, *, item_key: str, problem: Problem, counts: ReadCounts) -> list[SourceRating]:
    """Label Studio's ``CSV`` export: a header, then one row per record."""
    return list(iter_csv(stream, item_key=item_key, problem=problem, counts=counts))


def iter_csv(stream: io.TextIOBase, *, item_key: str, problem: Problem, counts: ReadCounts) -> Iterator[SourceRating]:
    """:func:`read_csv` a row at a time (the file is never read whole: issue 37, M3)."""
    table = csv_table(stream, problem)
    if table is None:
        return
    header, rows = table
    if "annotator" not in header:
        problem("line 1", "the header has no 'annotator' column (is this Label Studio's CSV export?)")
        return
    records = ((f"line {line}", dict(zip(header, row, strict=True))) for line, row in rows)
    yield from _records(records, item_key=item_key, decode=decode_cell, problem=problem, counts=counts)


def task_data_columns(fields: Iterable[str], item_fields: set[str], questions: set[str]) -> list[str]:
    """The source fields that are the task's data, not answers: named after a field of the
    project's items and not after a rubric question (a question wins: it is what was asked)."""
    return [f for f in fields if f in item_fields and f not in questions]


def _read_json_min(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> list[SourceRating]:
    # read whole: a record list that turns out to be a full export is refused before any record
    return read_json_min(whole_text(text), item_key=item_key, problem=problem, counts=counts)


def _read_csv(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> Iterator[SourceRating]:
    return iter_csv(as_stream(text), item_key=item_key, problem=problem, counts=counts)


#: said when no item has the external id a JSON-MIN record names
TASK_ID_HINT = (
    " (in a JSON-MIN export 'id' is Label Studio's task id: match the items by a field of the task's data "
    "with the item key, or export CSV, which keeps the data's id)"
)
JSON_MIN = Reader(
    "labelstudio-min",
    _("Label Studio JSON-MIN export"),
    HUMAN,
    ".json",
    _read_json_min,
    task_data_beside_answers=True,
    unknown_external_id_hint=TASK_ID_HINT,
    reads_stream=True,
)
CSV = Reader(
    "labelstudio-csv",
    _("Label Studio CSV export"),
    HUMAN,
    ".csv",
    _read_csv,
    task_data_beside_answers=True,
    reads_stream=True,
)

__all__ = ["decode_cell", "decode_result", "iter_csv", "read_csv", "read_json_min", "source_rater", "task_data_columns"]
