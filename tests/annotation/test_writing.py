"""The one writer of a submitted annotation (issue 32, ``annotation.writing``): its three forms
(the ORM, the lean path's statement, bulk rows for COPY) store the same row, and the assignment
ends the same whichever form marks it submitted."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation import importing, writing
from annotation.bulk import insert_rows
from annotation.models import Annotation, Assignment

from .factories import jsonl, make_project, turing_records

pytestmark = pytest.mark.django_db

#: what differs between the three rows on purpose (whose they are, and the key)
OWN = {"id", "assignment_id", "item_id", "rater_id"}


@pytest.fixture
def three(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=2)
    importing.import_items(project=project, data=jsonl(turing_records(2)), data_format="jsonl")
    return project, list(Assignment.objects.filter(project=project).order_by("id")[:3])


def submission(assignment: Assignment, at) -> writing.Submission:
    return writing.Submission(
        assignment_id=assignment.pk,
        item_id=assignment.item_id,
        rater_id=assignment.rater_id,
        rubric_version_id=assignment.project.rubric_version_id,
        answers={"human_written": "left", "note": "ü \u2028"},
        derived={"correct": True},
        at=at,
        duration_ms=4200,
        locale="de",
    )


def row_of(annotation: Annotation) -> dict:
    return {f.attname: getattr(annotation, f.attname) for f in Annotation._meta.concrete_fields}


def test_the_three_forms_store_the_same_row(three):
    _project, (a, b, c) = three
    at = timezone.now().replace(microsecond=0) - timedelta(days=1)
    writing.create(submission(a, at))
    with connection.cursor() as cursor:
        cursor.execute(writing.INSERT_SQL, writing.insert_params(submission(b, at), connection))
    insert_rows(Annotation, writing.COLUMNS, [writing.bulk_row(submission(c, at))])
    rows = [row_of(Annotation.objects.get(assignment=x)) for x in (a, b, c)]
    ormed, inserted, copied = ({k: v for k, v in r.items() if k not in OWN} for r in rows)
    assert inserted == copied
    assert inserted["answers"] == {"human_written": "left", "note": "ü \u2028"}
    assert (inserted["created_at"], inserted["updated_at"], inserted["revision"]) == (at, at, 1)
    assert (inserted["locale"], inserted["duration_ms"], inserted["source_import_id"]) == ("de", 4200, None)
    # the ORM sets its own timestamps (auto_now); every other column is the same
    assert {k: v for k, v in ormed.items() if not k.endswith("_at")} == {
        k: v for k, v in inserted.items() if not k.endswith("_at")
    }
    # what the lean path hands back without reading is what was stored
    stored = Annotation.objects.get(assignment=b)
    assert row_of(writing.stored(submission(b, at), stored.pk, using="default")) == row_of(stored)


def test_an_assignment_is_marked_submitted_alike(three):
    _project, (a, b, _c) = three
    at = timezone.now().replace(microsecond=0)
    Assignment.objects.filter(pk__in=[a.pk, b.pk]).update(skip_reason="was skipped", lease_expires_at=at)
    Assignment.objects.filter(pk=a.pk).update(**writing.submitted_assignment(at))
    with connection.cursor() as cursor:
        cursor.execute(writing.MARK_SUBMITTED_SQL, writing.mark_submitted_params(b.pk, at, connection))
    got = [
        Assignment.objects.values("status", "submitted_at", "skip_reason", "lease_expires_at").get(pk=x.pk)
        for x in (a, b)
    ]
    assert (
        got[0]
        == got[1]
        == {
            "status": Assignment.Status.SUBMITTED,
            "submitted_at": at,
            "skip_reason": "",
            "lease_expires_at": None,
        }
    )


def test_a_new_submitted_assignment_is_the_same_through_the_orm_and_in_bulk(three):
    project, (a, b, _c) = three
    at = timezone.now().replace(microsecond=0)
    Assignment.objects.filter(pk__in=[a.pk, b.pk]).delete()
    made = writing.new_submitted_assignment(
        project_id=project.pk, item_id=a.item_id, rater_id=a.rater_id, at=at, created_at=at, opened_at=at
    )
    orm = Assignment.objects.create(**made)
    insert_rows(
        Assignment,
        writing.ASSIGNMENT_COLUMNS,
        [
            writing.new_submitted_assignment_row(
                b.pk, project_id=project.pk, item_id=b.item_id, rater_id=b.rater_id, at=at, created_at=at, opened_at=at
            )
        ],
    )
    fields = ["status", "purpose", "position", "presentation", "skip_reason", "lease_expires_at", "submitted_at"]
    assert Assignment.objects.values(*fields).get(pk=orm.pk) == Assignment.objects.values(*fields).get(pk=b.pk)
    assert Assignment.objects.get(pk=b.pk).opened_at == at


def test_an_edit_keeps_the_answer_it_replaces_unless_a_judge_reruns(three):
    _project, (a, b, _c) = three
    at = timezone.now().replace(microsecond=0)
    for x in (a, b):
        writing.create(submission(x, at))
    version = a.project.rubric_version
    for x, keep in ((a, True), (b, False)):
        ann = Annotation.objects.get(assignment=x)
        writing.revise(
            ann,
            answers={"human_written": "right"},
            derived={},
            rubric_version=version,
            duration_ms=None,
            locale="",
            at=at,
            edited_by_id=None,
            keep_history=keep,
        )
    kept, replaced = (Annotation.objects.get(assignment=x) for x in (a, b))
    assert (kept.revision, kept.answers, kept.locale) == (2, {"human_written": "right"}, "")
    assert [h.answers for h in kept.history.all()] == [submission(a, at).answers]
    assert replaced.revision == 2 and not replaced.history.exists()
