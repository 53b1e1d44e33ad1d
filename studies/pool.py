"""The pool of a pooled plan: k :class:`PoolSlot` rows per item, claimed by annotators who ask
for work and held under a lease.

A claim uses ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL (one claim at a time per
process on SQLite) and takes expired holds first, so no item is left part-done. Expired leases
go back to the pool (lazily on claim, and every minute by beat: ``studies.tasks``); submitted
slots are final, so an item never gets more than k submissions; the unique (item, rater)
regular-assignment constraint stops anyone getting the same item twice. A submit locks the
slot before the assignment row, in the same order as a claim, so the two never deadlock."""

from __future__ import annotations

import random
import threading
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.assigning import draw_presentation
from annotation.models import Assignment, Project, Rater
from studies.models import AssignmentPlan, PoolSlot

from .rules import rater_requirement_keys

OPEN_STATUSES = (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS)
DEFAULT_LEASE_SECONDS = 30 * 60
# SQLite has no row locks: claims in one process are serialised by this lock (plus SQLite's
# own write lock and the compare-and-set update), which is what a dev server needs.
SQLITE_CLAIM_LOCK = threading.Lock()


def lease_seconds_for(plan: AssignmentPlan | None, project: Project | None = None) -> int:
    if plan is not None and plan.lease_seconds:
        return int(plan.lease_seconds)
    project = project or (plan.project if plan is not None else None)
    if project is not None and project.options.get("lease_seconds"):
        return int(project.options["lease_seconds"])
    return int(getattr(settings, "HV_LEASE_SECONDS", DEFAULT_LEASE_SECONDS))


class _LostRace(Exception):
    pass


def _claim_in_plan(plan: AssignmentPlan, rater: Rater) -> Assignment | None:
    present = set(plan.report.get("requires", [])) if plan.report else None
    reqs = [r for r in rater_requirement_keys(rater, plan) if present is None or r in present]
    if not reqs:
        return None
    if plan.cap_per_annotator is not None:
        mine = (
            Assignment.objects.filter(plan=plan, rater=rater)
            .exclude(status__in=[Assignment.Status.EXPIRED, Assignment.Status.SKIPPED])
            .count()
        )
        if mine >= plan.cap_per_annotator:
            return None
    lease = timedelta(seconds=lease_seconds_for(plan))
    rubric = plan.project.rubric_version.parsed()
    excluded: list[int] = []
    done = Assignment.objects.filter(item_id=OuterRef("item_id"), rater=rater, purpose=Assignment.Purpose.REGULAR)
    for _attempt in range(8):
        now = timezone.now()
        with transaction.atomic():
            base = PoolSlot.objects.filter(plan=plan).filter(~Exists(done))
            if excluded:
                base = base.exclude(item_id__in=excluded)
            fields = ("id", "item_id", "assignment_id", "state")
            # Expired holds first, so no item is left part-done; then open slots in pool
            # order, one index range per requirement key (an IN would sort the whole pool).
            slot = (
                base.filter(state=PoolSlot.State.LEASED, lease_expires_at__lt=now, requires__in=reqs)
                .select_for_update(skip_locked=True)
                .order_by("lease_expires_at")
                .values_list(*fields)
                .first()
            )
            if slot is None:
                for req in reqs:
                    slot = (
                        base.filter(state=PoolSlot.State.OPEN, requires=req)
                        .select_for_update(skip_locked=True)
                        .order_by("order_key")
                        .values_list(*fields)
                        .first()
                    )
                    if slot is not None:
                        break
            if slot is None:
                return None
            slot_id, item_id, old_assignment, _state = slot
            try:
                with transaction.atomic():  # a savepoint: a lost race undoes only this attempt
                    if old_assignment is not None:
                        Assignment.objects.filter(pk=old_assignment, status__in=OPEN_STATUSES).update(
                            status=Assignment.Status.EXPIRED, lease_expires_at=None
                        )
                    assignment = Assignment.objects.create(
                        project_id=plan.project_id,
                        item_id=item_id,
                        rater=rater,
                        plan=plan,
                        status=Assignment.Status.ASSIGNED,
                        purpose=Assignment.Purpose.REGULAR,
                        position=0,
                        presentation=draw_presentation(plan.project, rubric, random.Random()),
                        lease_expires_at=now + lease,
                    )
                    # Compare-and-set: the guard on SQLite; always true under the row lock on PostgreSQL.
                    took = (
                        PoolSlot.objects.filter(pk=slot_id)
                        .filter(Q(state=PoolSlot.State.OPEN) | Q(state=PoolSlot.State.LEASED, lease_expires_at__lt=now))
                        .update(
                            state=PoolSlot.State.LEASED,
                            rater=rater,
                            lease_expires_at=now + lease,
                            assignment=assignment,
                        )
                    )
                    if not took:
                        raise _LostRace
            except IntegrityError:
                excluded.append(item_id)  # the same annotator claimed another slot of this item a moment ago
                continue
            except _LostRace:
                continue
            return assignment
    return None


def claim_from_pool(*, rater: Rater, project: Project) -> Assignment | None:
    """Claim the next pooled item for this annotator from the project's active pooled plans."""
    plans = list(
        AssignmentPlan.objects.filter(
            project=project, mode=AssignmentPlan.Mode.POOLED, status=AssignmentPlan.Status.ACTIVE
        )
        .select_related("project__rubric_version")
        .order_by("created_at", "id")
    )
    for plan in plans:
        plan.project = project
        if connection.vendor == "sqlite":
            with SQLITE_CLAIM_LOCK:
                found = _claim_in_plan(plan, rater)
        else:
            found = _claim_in_plan(plan, rater)
        if found is not None:
            return found
    return None


def renew_lease(assignment: Assignment) -> None:
    """Opening a pooled assignment again extends its hold while the slot is still its own."""
    if assignment.plan_id is None or assignment.status not in OPEN_STATUSES:
        return
    plan = AssignmentPlan.objects.filter(pk=assignment.plan_id).only("lease_seconds", "project_id", "mode").first()
    if plan is None or plan.mode != AssignmentPlan.Mode.POOLED:
        return
    until = timezone.now() + timedelta(seconds=lease_seconds_for(plan, assignment.project))
    if PoolSlot.objects.filter(assignment_id=assignment.id, state=PoolSlot.State.LEASED).update(lease_expires_at=until):
        Assignment.objects.filter(pk=assignment.id, status__in=OPEN_STATUSES).update(lease_expires_at=until)
        assignment.lease_expires_at = until


def expire_leases(*, project: Project | None = None, now=None) -> int:
    """Return every expired hold to the pool now (claims also do this lazily, one at a time).
    Skips slots someone holds a lock on (being submitted or claimed)."""
    now = now or timezone.now()
    expired = 0
    qs = PoolSlot.objects.filter(state=PoolSlot.State.LEASED, lease_expires_at__lt=now)
    if project is not None:
        qs = qs.filter(plan__project=project)
    while True:
        with transaction.atomic():
            rows = list(qs.select_for_update(skip_locked=True).values_list("id", "assignment_id")[:1000])
            if not rows:
                return expired
            ids = [r[0] for r in rows]
            Assignment.objects.filter(pk__in=[r[1] for r in rows if r[1]], status__in=OPEN_STATUSES).update(
                status=Assignment.Status.EXPIRED, lease_expires_at=None
            )
            PoolSlot.objects.filter(pk__in=ids).update(
                state=PoolSlot.State.OPEN, rater=None, assignment=None, lease_expires_at=None
            )
            expired += len(ids)


def lock_slot_for(assignment_id: int) -> tuple[int, str] | None:
    """Lock the pool slot held by this assignment (before the assignment row: the same order
    as a claim, so a submit and a reclaim never deadlock). None when it holds none."""
    return PoolSlot.objects.select_for_update().filter(assignment_id=assignment_id).values_list("id", "state").first()


def release_slot(slot_id: int, *, submitted: bool) -> None:
    if submitted:
        PoolSlot.objects.filter(pk=slot_id).update(state=PoolSlot.State.SUBMITTED, lease_expires_at=None)
    else:
        PoolSlot.objects.filter(pk=slot_id).update(
            state=PoolSlot.State.OPEN, rater=None, assignment=None, lease_expires_at=None
        )
