"""A judge's rating, as every report and export reads it: the part of the rubric a judge
answers, the derived fields of its answer, and the annotation its model rater keeps per item.

A judge is a rater: each judge configuration owns one ``Rater(kind=model)``, and the combined
answer per item is stored as that rater's ``Annotation`` on a regular ``Assignment``, validated
by the same rubric validator and ``derive`` as a human submission. A judge answers a subset of
the rubric (the configured questions); it is validated against that part of the rubric (derived
fields and the acceptance rule are kept when every name they read is judged).

Written by judge runs (``judges/execution.py``) and by imported judge outputs
(``judges/imported.py``); ``judges/configuration.py`` checks a judge's questions form such a part."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.utils import timezone

from annotation import writing
from annotation.answers import METRICS_KEY
from annotation.expressions import Expression
from annotation.models import Annotation, Assignment, Item, Project, Rater
from annotation.rubric import Rubric


@lru_cache(maxsize=256)
def _judged_rubric(schema_json: str, questions: tuple[str, ...]) -> Rubric:
    schema = json.loads(schema_json)
    keep = set(questions)
    qs = []
    for q in schema["questions"]:
        if q["id"] not in keep:
            continue
        q = dict(q)
        if q.get("required_if") and not Expression(q["required_if"]).names <= keep:
            q.pop("required_if")
        qs.append(q)
    names = set(keep)
    derived = []
    for d in schema.get("derived") or []:
        if Expression(d["expr"]).names <= names:
            derived.append(d)
            names.add(d["id"])
    part = {
        "title": schema.get("title", ""),
        "instructions": schema.get("instructions", ""),
        "questions": qs,
        "derived": derived,
    }
    acc = schema.get("acceptance")
    if acc and Expression(acc["expr"]).names <= names:
        part["acceptance"] = acc
    return Rubric.from_schema(part)


def judged_rubric(project: Project, questions: Sequence[str]) -> Rubric:
    """The part of the project's rubric a judge answers."""
    return _judged_rubric(json.dumps(project.rubric_version.schema, sort_keys=True), tuple(questions))


def judge_derived(
    rubric: Rubric, answers: dict[str, Any], exact: dict[str, Any] | None, metrics: dict[str, float] | None = None
) -> dict[str, Any]:
    """Derived fields of a judge's answer. A combined judge (mean of passes or of an ensemble)
    answers with the options nearest its means and keeps the exact means, with the derived
    fields computed from them (e.g. ValueGround Total of the averaged scores), under
    ``judge_exact`` for the statistics; ``accepted`` stays that of the stored answer. A judge's
    numbers outside the rubric (``metrics``, e.g. AHEaD's ALIGN) go to ``judge_metrics``, where
    the statistics and exports read imported metrics too."""
    derived = rubric.derive(answers)
    if exact:
        exact_derived = rubric.derive({**answers, **exact})
        exact_derived.pop("accepted", None)
        derived["judge_exact"] = {"answers": exact, "derived": exact_derived}
    if metrics:
        derived[METRICS_KEY] = dict(metrics)
    return derived


def write_judge_annotation(
    *, rater: Rater, project: Project, item: Item, answers: dict[str, Any], derived: dict[str, Any]
) -> Annotation:
    """A model rater's annotation of the item on a submitted regular assignment (one per item and
    rater; a later run updates it). ``answers`` are validated by the rubric part the judge
    answers, ``derived`` computed by :func:`judge_derived`. Used by judge runs and by imported
    judge outputs (``judges/imported.py``). The rows are the one writer's
    (``annotation.writing``), as for a person's answer."""
    now = timezone.now()
    assignment, _ = Assignment.objects.get_or_create(
        item_id=item.pk,
        rater_id=rater.pk,
        purpose=Assignment.Purpose.REGULAR,
        defaults=writing.new_submitted_assignment(
            project_id=project.pk, item_id=item.pk, rater_id=rater.pk, at=now, created_at=now, opened_at=now
        ),
    )
    if assignment.status != Assignment.Status.SUBMITTED:
        Assignment.objects.filter(pk=assignment.pk).update(**writing.submitted_assignment(now))
    annotation = Annotation.objects.filter(assignment=assignment).first()
    if annotation is None:
        return writing.create(
            writing.Submission(
                assignment_id=assignment.pk,
                item_id=item.pk,
                rater_id=rater.pk,
                rubric_version_id=project.rubric_version_id,
                answers=answers,
                derived=derived,
                at=now,
            )
        )
    # a re-run replaces the model's rating; its earlier outputs stay with their run
    return writing.revise(
        annotation,
        answers=answers,
        derived=derived,
        rubric_version=project.rubric_version,
        duration_ms=None,
        locale="",
        at=now,
        edited_by_id=None,
        keep_history=False,
    )
