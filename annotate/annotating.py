"""What an annotator does with an assignment: open it, submit or edit an answer, skip it.

Answers are validated against the project's rubric version and stored against it. A pooled
assignment's slot and quality control take part in a submit (``studies.pool``,
``studies.quality``); which item comes next is ``studies.next_item``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import hotpath, writing
from annotation.models import OPENS_FROM, OPENS_TO, Annotation, Assignment, Rater
from annotation.presentation import item_render_context
from annotation.rubric import AnswerError
from core.errors import DomainError
from core.security import VerifiedSession
from core.values import value_problem
from studies import pool, quality
from studies.next_item import next_after_submit, queue_alone_decides

#: the longest wording key an answer may name (the column's length): the serializer's limit,
#: which the lean API restates as its pre-check, defined once here
LOCALE_MAX_LENGTH: int = Annotation._meta.get_field("locale").max_length


def check_owner(assignment: Assignment, rater: Rater) -> None:
    if assignment.rater_id != rater.id:
        # Never reveal whether the assignment exists for someone else.
        raise DomainError("assignment not found")


def open_assignment(*, assignment: Assignment, rater: Rater) -> Assignment:
    """The annotator looks at the item: an assigned item becomes in progress (the start of its
    time on task), and a pooled hold is renewed while the slot is still theirs."""
    check_owner(assignment, rater)
    if assignment.status == OPENS_FROM:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, status=OPENS_FROM).update(status=OPENS_TO, opened_at=now)
        assignment.status, assignment.opened_at = OPENS_TO, now
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
    locale: str = "",
) -> Annotation:
    """Validate answers against the project's rubric version and store them. A first submission
    and an edit are distinct requests: submitting twice is refused, editing needs an existing
    annotation; both only while the project is open. ``loaded`` is the same assignment already
    read with its item and project (the views have it); only its status is re-read under lock."""
    with hotpath.sqlite_writes(), transaction.atomic():
        # A pooled assignment's slot is locked first, as a claim does, so a submit and a
        # reclaim of an expired lease never deadlock; the one that comes second sees the result.
        slot = None
        if loaded is None or loaded.pk != assignment_id or loaded.plan_id is not None:
            slot = pool.lock_slot_for(assignment_id)
        # Lock the assignment row only (locking a joined project row would serialise every
        # submission of a project) and re-read what may have changed since ``loaded``.
        locked = hotpath.lock_status(assignment_id)
        if locked is None or locked[1] != rater.id:
            raise DomainError("assignment not found")  # never reveal someone else's assignment
        status = locked[0]
        assignment = (
            loaded
            if loaded is not None and loaded.pk == assignment_id
            else (Assignment.objects.select_related("item", "project__rubric_version").get(pk=assignment_id))
        )
        stored = store_locked(
            assignment=assignment,
            status=status,
            rater=rater,
            answers=answers,
            duration_ms=duration_ms,
            edit=edit,
            slot=slot,
            locale=locale,
        )
    return stored.annotation


def store_locked(
    *,
    assignment: Assignment,
    status: str,
    rater: Rater,
    answers: dict[str, Any],
    duration_ms: int | None,
    edit: bool,
    slot: tuple[int, str] | None,
    probe_next: bool = False,
    locale: str = "",
) -> hotpath.Stored:
    """The checks and writes of a submission once its rows are locked (the pool slot, if any,
    then the assignment; ``status`` is the one read under the lock), inside the caller's
    transaction. Shared by :func:`submit_annotation` and the lean path (``annotate.hot_api``,
    the annotate page), so both refuse and store alike. ``probe_next``: also find the next
    assignment of the rater's own queue in the same statement (a first submission only)."""
    project = assignment.project
    if not project.is_open:
        raise DomainError(_("this project is closed; answers can no longer be changed"))
    if status == Assignment.Status.SKIPPED and assignment.plan_id is not None:
        # A skipped plan item went back to the pool for someone else.
        raise DomainError(_("this assignment was skipped; the item has gone to someone else"))
    if status == Assignment.Status.EXPIRED:
        raise DomainError(_("this assignment has expired (its hold ran out and the item went back to the pool)"))
    already = status == Assignment.Status.SUBMITTED
    if already and not edit:
        raise DomainError(_("this assignment was already submitted; edit your answer instead"))
    if edit and not already:
        raise DomainError(_("there is no submitted answer to edit"))
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
        raise DomainError(_("some answers are missing or invalid"), errors=exc.errors) from None
    try:
        locale = rubric.check_locale(locale)  # the wording the answer was given under
    except ValueError as exc:
        raise DomainError(str(exc), errors={"locale": str(exc)}) from None
    derived = rubric.derive(cleaned, presentation=assignment.presentation)
    if duration_ms is not None and (duration_ms < 0 or duration_ms > 86_400_000):
        duration_ms = None
    qc_on = bool(project.options.get("qc"))
    if qc_on and not already:
        quality.check_submission(project=project, assignment=assignment, answers=cleaned, duration_ms=duration_ms)
    if already:
        annotation = Annotation.objects.select_for_update().get(assignment_id=assignment.pk)
        # the one writer keeps the answer being replaced (annotation history), in this transaction
        writing.revise(
            annotation,
            answers=cleaned,
            derived=derived,
            rubric_version=rubric_version,
            duration_ms=duration_ms,  # the time on this version; the earlier ones' are in history
            locale=locale,
            at=timezone.now(),
            edited_by_id=rater.user_id,
        )
        return hotpath.Stored(annotation=annotation)
    # One statement (PostgreSQL), built from the one writer's definition (annotation.writing),
    # inserts the annotation and marks the assignment submitted (and probes the queue): the
    # annotation and the status change commit together.
    stored = hotpath.insert_first_answer(
        assignment=assignment,
        rater=rater,
        rubric_version=rubric_version,
        answers=cleaned,
        derived=derived,
        duration_ms=duration_ms,
        now=timezone.now(),
        probe_next=probe_next,
        locale=locale,
    )
    assignment.status = Assignment.Status.SUBMITTED
    if slot is not None:
        pool.release_slot(slot[0], submitted=True)
    if assignment.purpose in (Assignment.Purpose.ATTENTION, Assignment.Purpose.GOLD):
        quality.record_submission(assignment=assignment, annotation=stored.annotation)
    return stored


def skip_assignment(*, assignment_id: int, rater: Rater, reason: str) -> Assignment:
    reason = (reason or "").strip()
    if not reason:
        raise DomainError(_("say why you skip this item"), errors={"reason": _("a reason is required")})
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
            raise DomainError(_("this project is closed"))
        if assignment.status == Assignment.Status.SUBMITTED:
            raise DomainError(_("this assignment was already submitted"))
        if assignment.status == Assignment.Status.EXPIRED:
            raise DomainError(_("this assignment has expired"))
        assignment.status = Assignment.Status.SKIPPED
        assignment.skip_reason = reason[:2000]
        assignment.lease_expires_at = None
        assignment.save(update_fields=["status", "skip_reason", "lease_expires_at"])
        if slot is not None:
            pool.release_slot(slot[0], submitted=False)  # someone else does this item
    return assignment


@dataclass
class LeanSubmit:
    """What :func:`submit_mine` did. ``loaded`` None: not the caller's assignment, or the
    session no longer holds (the ordinary path answers); ``error``: refused, nothing stored."""

    loaded: hotpath.Loaded | None = None
    stored: hotpath.Stored | None = None
    error: DomainError | None = None
    next_id: int | None = None


def submit_mine(
    *,
    session: VerifiedSession,
    assignment_id: int,
    answers: dict[str, Any] | Callable[[Assignment], dict[str, Any]],
    duration_ms: int | None,
    edit: bool = False,
    with_user: bool = False,
    locale: str = "",
) -> LeanSubmit:
    """The lean submit (issue 15), for a session the caller verified
    (``core.security.verified_session``): in one transaction, lock the
    assignment while checking it is the caller's own and reading what the checks need (one
    statement; a plan's pool slot is locked first, as a claim does), run the checks and writes
    of :func:`store_locked`, and, without crowd quotas or QC, find the next assignment in the
    statement that stores. After the commit the next assignment is asked of
    ``studies.next_item`` otherwise (QC injection, quotas), or of the pool when the queue is
    empty. ``answers`` may be a function of the locked assignment (a web form is read against
    its item)."""
    out = LeanSubmit()
    try:
        with hotpath.sqlite_writes(), transaction.atomic():
            slot = None
            args = {"session": session, "assignment_id": assignment_id, "with_user": with_user}
            loaded = hotpath.load_mine(**args, kind="lock", plan_free=True)
            if loaded is None:
                seen = hotpath.load_mine(**args)
                if seen is None or seen.assignment.plan_id is None:
                    return out
                slot = pool.lock_slot_for(assignment_id)
                loaded = hotpath.load_mine(**args, kind="lock")
                if loaded is None:
                    return out
            out.loaded = loaded
            assignment = loaded.assignment
            given = answers(assignment) if callable(answers) else answers
            simple = queue_alone_decides(assignment.rater, assignment.project)
            out.stored = store_locked(
                assignment=assignment,
                status=assignment.status,
                rater=assignment.rater,
                answers=given,
                duration_ms=duration_ms,
                edit=edit,
                slot=slot,
                probe_next=simple and not edit,
                locale=locale,
            )
    except DomainError as exc:
        out.error = exc
        return out
    out.next_id = next_after_submit(
        rater=assignment.rater,
        project=assignment.project,
        queue_next=out.stored.next_id if out.stored.probed else False,
    )
    return out
