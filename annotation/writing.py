"""The one writer of a submitted annotation (issue 32): what a stored answer and its assignment
hold, decided once for every way an answer arrives.

Four paths store answers: an annotator's submit (``annotate.annotating.store_locked``, whose
first submissions go through the lean statement of ``annotation.hotpath``), a model judge's
rating (``judges.ratings.write_judge_annotation``), the import of answers from other tools (its
bulk COPY) and the demo's simulated studies (``demo.studies``, in bulk). Each builds its rows
here, so the columns agree:

- **the annotation** (:class:`Submission`, :func:`values`): the answers and derived fields,
  the rubric version they were given under, the wording (``locale``), the time on task, when
  it was given (``created_at`` = ``updated_at``), revision 1, and the import it came from (null
  for answers given in HV). A column a migration adds is written with its default: the columns
  are the model's, read from ``_meta`` once here;
- **its assignment** (:func:`submitted_assignment`): submitted at that time, no skip reason,
  no pooled hold left;
- **an edit** (:func:`revise`): the answer it replaces is kept in the annotation's history
  (``annotation.history``) in the same transaction, and the revision number goes up.

Three forms of the same rows: :func:`create` (one row through the ORM), :data:`INSERT_SQL` with
:func:`insert_params` (the lean path's prepared statement, built once at import from
:data:`FIELDS`), and :data:`COLUMNS` with :func:`bulk_row` (plain tuples for
``annotation.bulk.insert_rows``: COPY on PostgreSQL)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import models

from . import history
from .models import Annotation, Assignment, RubricVersion


# ----------------------------------------------------------------------------- the annotation
@dataclass(frozen=True)
class Submission:
    """A submitted answer as it is first stored: whose (assignment, item, rater), under which
    rubric version, what (answers and derived fields), when, how long it took, in which wording,
    and from which import (None: given in HV)."""

    assignment_id: int
    item_id: int
    rater_id: int
    rubric_version_id: int
    answers: dict[str, Any]
    derived: dict[str, Any]
    at: datetime
    duration_ms: int | None = None
    locale: str = ""
    source_import_id: int | None = None


#: the columns an annotation's insert writes, in order: every concrete column but the key
FIELDS: tuple[models.Field, ...] = tuple(f for f in Annotation._meta.concrete_fields if not f.primary_key)
#: the same columns as model field names (``annotation.bulk.insert_rows`` takes these)
COLUMNS: tuple[str, ...] = tuple(f.name for f in FIELDS)
_JSON = tuple(isinstance(f, models.JSONField) for f in FIELDS)
_ATTNAMES = tuple(f.attname for f in FIELDS)
_DEFAULTS = {f.attname: f.get_default for f in FIELDS}

#: the insert of one annotation (``%s`` placeholders, values from :func:`insert_params`)
INSERT_SQL: str = (
    f'INSERT INTO "{Annotation._meta.db_table}" ({", ".join(chr(34) + f.column + chr(34) for f in FIELDS)}) '
    f"VALUES ({', '.join('%s' for _ in FIELDS)})"
)


def values(sub: Submission) -> dict[str, Any]:
    """Every column of the annotation ``sub`` makes, by attribute name, as Python values; the
    columns a submission does not name get their field's default. Made once per submission (the
    lean path asks twice: for the insert and for the instance it hands back)."""
    found = sub.__dict__.get("_values")
    if found is not None:
        return found
    given = {
        "assignment_id": sub.assignment_id,
        "item_id": sub.item_id,
        "rater_id": sub.rater_id,
        "rubric_version_id": sub.rubric_version_id,
        "answers": sub.answers,
        "derived": sub.derived,
        "duration_ms": sub.duration_ms,
        "created_at": sub.at,
        "updated_at": sub.at,
        "revision": 1,
        "locale": sub.locale,
        "source_import_id": sub.source_import_id,
    }
    row = {name: given[name] if name in given else _DEFAULTS[name]() for name in _ATTNAMES}
    object.__setattr__(sub, "_values", row)  # a cache beside the frozen fields, not one of them
    return row


def insert_params(sub: Submission, connection: Any) -> list[Any]:
    """The parameters of :data:`INSERT_SQL` for ``sub``, prepared for ``connection`` as the
    ORM prepares them."""
    row = values(sub)
    return [f.get_db_prep_save(row[f.attname], connection) for f in FIELDS]


def bulk_row(sub: Submission) -> tuple[Any, ...]:
    """``sub`` as one row of :data:`COLUMNS` for ``annotation.bulk.insert_rows`` (JSON as
    text, as that writer takes it)."""
    row = values(sub)
    return tuple(
        json.dumps(row[name]) if is_json else row[name] for name, is_json in zip(_ATTNAMES, _JSON, strict=True)
    )


def stored(sub: Submission, pk: int, *, using: str) -> Annotation:
    """The annotation that :data:`INSERT_SQL` stored for ``sub`` under key ``pk``, as the ORM
    would read it back (no query)."""
    row = values(sub)
    concrete = Annotation._meta.concrete_fields
    return Annotation.from_db(
        using, [f.attname for f in concrete], [pk if f.primary_key else row[f.attname] for f in concrete]
    )


def create(sub: Submission) -> Annotation:
    """Store ``sub`` through the ORM (one row, outside the hot loop)."""
    return Annotation.objects.create(**values(sub))


# ----------------------------------------------------------------------------- its assignment
def submitted_assignment(at: datetime) -> dict[str, Any]:
    """The columns of an assignment once its answer is stored (model field names): submitted
    at ``at``, no skip reason, no pooled hold left."""
    return {
        "status": Assignment.Status.SUBMITTED,
        "submitted_at": at,
        "skip_reason": "",
        "lease_expires_at": None,
    }


#: the fields :func:`submitted_assignment` sets, in its order
SUBMITTED_FIELDS: tuple[models.Field, ...] = tuple(Assignment._meta.get_field(n) for n in submitted_assignment(None))
#: marks one assignment submitted (``%s`` placeholders: :func:`mark_submitted_params`)
MARK_SUBMITTED_SQL: str = (
    f'UPDATE "{Assignment._meta.db_table}" SET '
    f"{', '.join(chr(34) + f.column + chr(34) + ' = %s' for f in SUBMITTED_FIELDS)} "
    f'WHERE "{Assignment._meta.pk.column}" = %s'
)


def mark_submitted_params(assignment_id: int, at: datetime, connection: Any) -> list[Any]:
    """The parameters of :data:`MARK_SUBMITTED_SQL`."""
    row = submitted_assignment(at)
    return [*(f.get_db_prep_save(row[f.name], connection) for f in SUBMITTED_FIELDS), assignment_id]


def new_submitted_assignment(
    *, project_id: int, item_id: int, rater_id: int, at: datetime, created_at: datetime, opened_at: datetime | None
) -> dict[str, Any]:
    """A regular assignment made already answered (a judge's rating, an imported or simulated
    answer), by attribute name (ORM keywords, and columns ``annotation.bulk.insert_rows``
    takes): in no queue, shown in the item's own order, submitted at ``at``."""
    return {
        "project_id": project_id,
        "item_id": item_id,
        "rater_id": rater_id,
        "purpose": Assignment.Purpose.REGULAR,
        "position": 0,
        "presentation": {},
        "created_at": created_at,
        "opened_at": opened_at,
        **submitted_assignment(at),
    }


#: the columns of :func:`new_submitted_assignment_row`, the key first (attribute names)
ASSIGNMENT_COLUMNS: tuple[str, ...] = (
    "id",
    *new_submitted_assignment(project_id=0, item_id=0, rater_id=0, at=None, created_at=None, opened_at=None),
)
_ASSIGNMENT_JSON = tuple(isinstance(Assignment._meta.get_field(n), models.JSONField) for n in ASSIGNMENT_COLUMNS)


def new_submitted_assignment_row(assignment_id: int, **kwargs: Any) -> tuple[Any, ...]:
    """:func:`new_submitted_assignment` as one row of :data:`ASSIGNMENT_COLUMNS` for
    ``annotation.bulk.insert_rows``, under a key from ``annotation.bulk.reserve_ids``."""
    row = {"id": assignment_id, **new_submitted_assignment(**kwargs)}
    return tuple(
        json.dumps(row[name]) if is_json else row[name]
        for name, is_json in zip(ASSIGNMENT_COLUMNS, _ASSIGNMENT_JSON, strict=True)
    )


# ----------------------------------------------------------------------------- an edit
def revise(
    annotation: Annotation,
    *,
    answers: dict[str, Any],
    derived: dict[str, Any],
    rubric_version: RubricVersion,
    duration_ms: int | None,
    locale: str,
    at: datetime,
    edited_by_id: int | None,
    keep_history: bool = True,
) -> Annotation:
    """Replace a stored answer (the row locked, inside the caller's transaction): the answer
    being replaced is kept as a revision first (``annotation.history``), then the annotation
    holds the new one under the next revision number. ``duration_ms`` is the time on this
    version (the earlier ones' stay in the history). ``keep_history=False`` only for a model
    judge's re-run, whose earlier outputs its run keeps (``judges.models.JudgeOutput``): the
    history is of people's edits."""
    if keep_history:
        history.keep_previous(annotation, edited_by_id=edited_by_id, edited_at=at)
    annotation.answers, annotation.derived = answers, derived
    annotation.rubric_version = rubric_version
    annotation.revision += 1
    annotation.duration_ms = duration_ms
    annotation.locale = locale
    annotation.save(update_fields=REVISED_FIELDS)
    return annotation


#: what an edit changes (``updated_at`` is set by the save itself)
REVISED_FIELDS: list[str] = ["answers", "derived", "rubric_version", "revision", "duration_ms", "locale", "updated_at"]
