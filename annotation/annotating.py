"""What an annotator does with an assignment: open it, submit or edit an answer, skip it.

Answers are validated against the project's rubric version and stored against it. A pooled
assignment's slot and quality control take part in a submit (``studies.pool``,
``studies.quality``); which item comes next is ``studies.next_item``."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import DomainError
from core.values import value_problem
from studies import pool, quality

from .models import Annotation, Assignment, Rater
from .presentation import item_render_context
from .rubric import AnswerError


def check_owner(assignment: Assignment, rater: Rater) -> None:
    if assignment.rater_id != rater.id:
        # Never reveal whether the assignment exists for someone else.
        raise DomainError("assignment not found")


def open_assignment(*, assignment: Assignment, rater: Rater) -> Assignment:
    """The annotator looks at the item: an assigned item becomes in progress (the start of its
    time on task), and a pooled hold is renewed while the slot is still theirs."""
    check_owner(assignment, rater)
    if assignment.status == Assignment.Status.ASSIGNED:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ASSIGNED).update(
            status=Assignment.Status.IN_PROGRESS, opened_at=now
        )
        assignment.status, assignment.opened_at = Assignment.Status.IN_PROGRESS, now
    if assignment.plan_id is not None:
        pool.renew_lease(assignment)
    return assignment


def submit_annotation(
    *,
    assignment_id: int,
    rater: Rater,
    answers: dict[str, Any],
    duration_ms: int | None = None,
    edit: bool = False,
    loaded: Assignment | None = None,
) -> Annotation:
    """Validate answers against the project's rubric version and store them. A first submission
    and an edit are distinct requests: submitting twice is refused, editing needs an existing
    annotation; both only while the project is open. ``loaded`` is the same assignment already
    read with its item and project (the views have it); only its status is re-read under lock."""
    with transaction.atomic():
        # A pooled assignment's slot is locked first, as a claim does, so a submit and a
        # reclaim of an expired lease never deadlock; the one that comes second sees the result.
        slot = None
        if loaded is None or loaded.pk != assignment_id or loaded.plan_id is not None:
            slot = pool.lock_slot_for(assignment_id)
        # Lock the assignment row only (locking a joined project row would serialise every
        # submission of a project) and re-read what may have changed since ``loaded``.
        locked = (
            Assignment.objects.select_for_update(of=("self",))
            .filter(pk=assignment_id)
            .values_list("status", "rater_id")
            .first()
        )
        if locked is None or locked[1] != rater.id:
            raise DomainError("assignment not found")  # never reveal someone else's assignment
        status = locked[0]
        assignment = (
            loaded
            if loaded is not None and loaded.pk == assignment_id
            else (Assignment.objects.select_related("item", "project__rubric_version").get(pk=assignment_id))
        )
        project = assignment.project
        if not project.is_open:
            raise DomainError("this project is closed; answers can no longer be changed")
        if status == Assignment.Status.SKIPPED and assignment.plan_id is not None:
            # A skipped plan item went back to the pool for someone else.
            raise DomainError("this assignment was skipped; the item has gone to someone else")
        if status == Assignment.Status.EXPIRED:
            raise DomainError("this assignment has expired (its hold ran out and the item went back to the pool)")
        already = status == Assignment.Status.SUBMITTED
        if already and not edit:
            raise DomainError("this assignment was already submitted; edit your answer instead")
        if edit and not already:
            raise DomainError("there is no submitted answer to edit")
        problem = value_problem(answers)
        if problem:
            raise DomainError(f"answers cannot be stored: {problem}")
        rubric_version = project.rubric_version
        rubric = rubric_version.parsed()
        try:
            cleaned = rubric.validate(
                answers, item=item_render_context(assignment.item), presentation=assignment.presentation
            )
        except AnswerError as exc:
            raise DomainError("some answers are missing or invalid", errors=exc.errors) from None
        derived = rubric.derive(cleaned, presentation=assignment.presentation)
        if duration_ms is not None and (duration_ms < 0 or duration_ms > 86_400_000):
            duration_ms = None
        qc_on = bool(project.options.get("qc"))
        if qc_on and not already:
            quality.check_submission(project=project, assignment=assignment, answers=cleaned, duration_ms=duration_ms)
        if already:
            annotation = Annotation.objects.select_for_update().get(assignment_id=assignment_id)
            annotation.answers, annotation.derived = cleaned, derived
            annotation.rubric_version = rubric_version
            annotation.revision += 1
            annotation.save(update_fields=["answers", "derived", "rubric_version", "revision", "updated_at"])
        else:
            annotation = Annotation.objects.create(
                assignment_id=assignment_id,
                item_id=assignment.item_id,
                rater=rater,
                rubric_version=rubric_version,
                answers=cleaned,
                derived=derived,
                duration_ms=duration_ms,
            )
            Assignment.objects.filter(pk=assignment_id).update(
                status=Assignment.Status.SUBMITTED, submitted_at=timezone.now(), skip_reason="", lease_expires_at=None
            )
            assignment.status = Assignment.Status.SUBMITTED
            if slot is not None:
                pool.release_slot(slot[0], submitted=True)
            if assignment.purpose in (Assignment.Purpose.ATTENTION, Assignment.Purpose.GOLD):
                quality.record_submission(assignment=assignment, annotation=annotation)
    return annotation


def skip_assignment(*, assignment_id: int, rater: Rater, reason: str) -> Assignment:
    reason = (reason or "").strip()
    if not reason:
        raise DomainError("say why you skip this item", errors={"reason": "a reason is required"})
    with transaction.atomic():
        slot = pool.lock_slot_for(assignment_id)
        assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("project")
            .filter(pk=assignment_id)
            .first()
        )
        if assignment is None:
            raise DomainError("assignment not found")
        check_owner(assignment, rater)
        if not assignment.project.is_open:
            raise DomainError("this project is closed")
        if assignment.status == Assignment.Status.SUBMITTED:
            raise DomainError("this assignment was already submitted")
        if assignment.status == Assignment.Status.EXPIRED:
            raise DomainError("this assignment has expired")
        assignment.status = Assignment.Status.SKIPPED
        assignment.skip_reason = reason[:2000]
        assignment.lease_expires_at = None
        assignment.save(update_fields=["status", "skip_reason", "lease_expires_at"])
        if slot is not None:
            pool.release_slot(slot[0], submitted=False)  # someone else does this item
    return assignment
