"""Assigning a sample: k annotators per item under the rules of ``studies.rules``, caps per
annotator, hand assignment and reassignment.

Two modes:
  * pre-assigned: rows are written now, least-loaded eligible annotator first, caps honoured;
    slots nobody can fill are reported;
  * pooled: the plan's places become a pool that annotators claim from (``studies.pool``).
"""

from __future__ import annotations

import heapq
import json
import random
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.assigning import draw_presentation
from annotation.bulk import insert_rows
from annotation.models import (
    Assignment,
    AssignmentPlan,
    Item,
    Membership,
    PoolSlot,
    Project,
    Rater,
    Sample,
)
from core.errors import DomainError

from .pool import OPEN_STATUSES, lease_seconds_for, lock_slot_for
from .rules import (
    eligible_for,
    item_value_rows,
    parse_rules,
    rater_requirement_keys,
    slot_requirements,
)


def project_annotators(project: Project) -> list[Rater]:
    return list(
        Rater.objects.filter(
            kind=Rater.Kind.HUMAN,
            user__memberships__project=project,
            user__memberships__role=Membership.Role.ANNOTATOR,
        )
        .distinct()
        .order_by("id")
    )


def create_plan(
    *,
    sample: Sample,
    name: str = "",
    mode: str = AssignmentPlan.Mode.POOLED,
    k: int | None = None,
    eligibility: list[dict[str, str]] | None = None,
    balance: dict[str, Any] | None = None,
    cap_per_annotator: int | None = None,
    lease_seconds: int | None = None,
    seed: int | None = None,
    take_over: bool = False,
    created_by: AbstractBaseUser | None = None,
) -> AssignmentPlan:
    """Assign a sample. ``take_over`` makes the plans the project's only assignment strategy:
    the default "everyone gets every item" rows nobody has opened yet are removed, and new
    members and imports no longer get items automatically."""
    project = sample.project
    if mode not in AssignmentPlan.Mode.values:
        raise DomainError(f"unknown mode {mode!r}: use preassigned or pooled")
    rules = parse_rules(k=k if k is not None else project.k_per_item, eligibility=eligibility, balance=balance)
    if cap_per_annotator is not None and cap_per_annotator < 1:
        raise DomainError("the per-annotator cap must be at least 1 (or empty for none)")
    if lease_seconds is not None and not 30 <= lease_seconds <= 7 * 86400:
        raise DomainError("the lease must be between 30 seconds and 7 days")
    seed = int(seed if seed is not None else sample.seed)
    item_ids = list(sample.members.order_by("item_id").values_list("item_id", flat=True))
    if not item_ids:
        raise DomainError("the sample holds no items")
    keys = sorted({r["item_key"] for r in rules.eligibility})
    with transaction.atomic():
        if take_over:
            Assignment.objects.filter(
                project=project,
                plan__isnull=True,
                status=Assignment.Status.ASSIGNED,
                opened_at__isnull=True,
                purpose=Assignment.Purpose.REGULAR,
            ).delete()
        plan = AssignmentPlan.objects.create(
            project=project,
            sample=sample,
            name=(name or "").strip()[:200] or f"{sample.name}: k={rules.k}",
            mode=mode,
            k=rules.k,
            eligibility=rules.eligibility,
            balance=rules.balance,
            cap_per_annotator=cap_per_annotator,
            lease_seconds=lease_seconds,
            seed=seed,
            created_by=created_by if created_by is not None and created_by.is_authenticated else None,
        )
        rng = random.Random(seed)
        slot_reqs: list[tuple[int, list[str]]] = []
        unstaffable: dict[str, int] = {}
        for item_id, values in item_value_rows(item_ids, keys):
            reqs, problem = slot_requirements(rules, values)
            if problem:
                unstaffable[problem] = unstaffable.get(problem, 0) + 1
                continue
            slot_reqs.append((item_id, reqs))
        rng.shuffle(slot_reqs)
        report: dict[str, Any] = {
            "items": len(item_ids),
            "slots": sum(len(r) for _, r in slot_reqs),
            "unstaffable_items": [f"{n} item(s): {why}" for why, n in sorted(unstaffable.items())],
            "requires": sorted({r for _, reqs in slot_reqs for r in reqs}),
        }
        if mode == AssignmentPlan.Mode.POOLED:
            _write_pool(plan, slot_reqs, rng)
        else:
            report.update(_preassign(plan, slot_reqs, rng))
        plan.report = report
        plan.save(update_fields=["report"])
        options = dict(project.options)
        if mode == AssignmentPlan.Mode.POOLED:
            options["pooled_plans"] = True
        if take_over:
            options["assignment"] = "plans"
        if options != project.options:
            Project.objects.filter(pk=project.pk).update(options=options)
            project.options = options
    return plan


def _write_pool(plan: AssignmentPlan, slot_reqs: list[tuple[int, list[str]]], rng: random.Random) -> None:
    # Slots of one item share an order key: concurrent annotators fill an item's k places
    # together, so items complete early instead of all being partly done.
    def rows():
        for order, (item_id, reqs) in enumerate(slot_reqs):
            for req in reqs:
                yield plan.id, item_id, req, order, PoolSlot.State.OPEN

    insert_rows(PoolSlot, ["plan", "item", "requires", "order_key", "state"], rows())


def _preassign(plan: AssignmentPlan, slot_reqs: list[tuple[int, list[str]]], rng: random.Random) -> dict[str, Any]:
    project = plan.project
    raters = project_annotators(project)
    if not raters:
        raise DomainError("the project has no annotators yet: add annotators before pre-assigning")
    load = dict(
        Assignment.objects.filter(project=project, rater__in=raters)
        .exclude(status__in=[Assignment.Status.EXPIRED, Assignment.Status.SKIPPED])
        .values_list("rater_id")
        .annotate(c=Count("id"))
    )
    plan_load = {r.id: 0 for r in raters}
    existing: dict[int, set[int]] = {}
    item_ids = [i for i, _ in slot_reqs]
    for start in range(0, len(item_ids), 10_000):
        for item_id, rater_id in Assignment.objects.filter(
            item_id__in=item_ids[start : start + 10_000], purpose=Assignment.Purpose.REGULAR
        ).values_list("item_id", "rater_id"):
            existing.setdefault(item_id, set()).add(rater_id)
    tiebreak = {r.id: rng.random() for r in raters}
    by_req: dict[str, list[tuple[int, float, int]]] = {}
    for r in raters:
        for key in rater_requirement_keys(r, plan):
            by_req.setdefault(key, []).append((load.get(r.id, 0), tiebreak[r.id], r.id))
    for heap in by_req.values():
        heapq.heapify(heap)
    cap = plan.cap_per_annotator
    rubric = project.rubric_version.parsed()
    new: dict[int, list[tuple[int, dict]]] = {}
    unfilled: dict[str, int] = {}
    for item_id, reqs in slot_reqs:
        taken = existing.setdefault(item_id, set())
        for req in reqs:
            heap = by_req.get(req, [])
            put_back = []
            chosen = None
            while heap:
                cur_load, tb, rid = heapq.heappop(heap)
                if cur_load != load.get(rid, 0):
                    heapq.heappush(heap, (load.get(rid, 0), tb, rid))
                    continue
                if cap is not None and plan_load[rid] >= cap:
                    continue  # full for good in this plan: drop from the heap
                if rid in taken:
                    put_back.append((cur_load, tb, rid))
                    continue
                chosen = rid
                break
            for entry in put_back:
                heapq.heappush(heap, entry)
            if chosen is None:
                label = req or "anyone"
                unfilled[label] = unfilled.get(label, 0) + 1
                continue
            taken.add(chosen)
            load[chosen] = load.get(chosen, 0) + 1
            plan_load[chosen] += 1
            heapq.heappush(heap, (load[chosen], tiebreak[chosen], chosen))
            new.setdefault(chosen, []).append((item_id, draw_presentation(project, rubric, rng)))
    start_pos = dict(Assignment.objects.filter(project=project).values_list("rater_id").annotate(p=Max("position")))
    now = timezone.now()

    def rows():
        for rid, entries in new.items():
            rng.shuffle(entries)  # randomised item order per annotator, stored as position
            base = (start_pos.get(rid) or 0) + 1
            for offset, (item_id, presentation) in enumerate(entries):
                yield (
                    project.id,
                    item_id,
                    rid,
                    Assignment.Status.ASSIGNED,
                    Assignment.Purpose.REGULAR,
                    base + offset,
                    json.dumps(presentation),
                    "",
                    now,
                    plan.id,
                )

    created = insert_rows(
        Assignment,
        [
            "project",
            "item",
            "rater",
            "status",
            "purpose",
            "position",
            "presentation",
            "skip_reason",
            "created_at",
            "plan",
        ],
        rows(),
    )
    return {
        "assignments_created": created,
        "unfilled_slots": sum(unfilled.values()),
        "unfilled_by_requirement": unfilled,
        "per_annotator": {str(rid): len(v) for rid, v in new.items()},
    }


# --------------------------------------------------------------------------- hand assignment
def hand_assign(
    *,
    project: Project,
    item: Item,
    rater: Rater,
    plan: AssignmentPlan | None = None,
    force: bool = False,
) -> Assignment:
    """Give one item to one annotator by hand (optionally within a plan, checking its rules)."""
    if item.project_id != project.id:
        raise DomainError("that item is not in this project")
    if not Membership.objects.filter(project=project, user_id=rater.user_id, role=Membership.Role.ANNOTATOR).exists():
        raise DomainError(f"{rater.name} is not an annotator of this project")
    if plan is not None and not force and not eligible_for(rater, plan, item):
        raise DomainError(f"{rater.name} is not eligible for {item.external_id} under the plan's rules")
    rubric = project.rubric_version.parsed()
    with transaction.atomic():
        row = (
            Assignment.objects.select_for_update()
            .filter(item=item, rater=rater, purpose=Assignment.Purpose.REGULAR)
            .first()
        )
        if row is not None:
            if row.status in (Assignment.Status.SUBMITTED, *OPEN_STATUSES):
                raise DomainError(f"{rater.name} already has {item.external_id} ({row.get_status_display().lower()})")
            row.status, row.plan, row.lease_expires_at, row.skip_reason = Assignment.Status.ASSIGNED, plan, None, ""
            row.save(update_fields=["status", "plan", "lease_expires_at", "skip_reason"])
            return row
        position = (Assignment.objects.filter(project=project, rater=rater).aggregate(m=Max("position"))["m"] or 0) + 1
        return Assignment.objects.create(
            project=project,
            item=item,
            rater=rater,
            plan=plan,
            position=position,
            presentation=draw_presentation(project, rubric, random.Random()),
        )


def reassign(*, assignment: Assignment, to_rater: Rater, force: bool = False) -> Assignment:
    """Move an unfinished assignment to another annotator: the old row is kept as expired (an
    audit trail), the new annotator gets the item (in the same pool slot when pooled)."""
    if assignment.status == Assignment.Status.SUBMITTED:
        raise DomainError("a submitted assignment cannot be reassigned")
    if assignment.rater_id == to_rater.id:
        raise DomainError("the assignment already belongs to that annotator")
    plan = assignment.plan
    with transaction.atomic():
        slot = lock_slot_for(assignment.id)
        old = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if old.status == Assignment.Status.SUBMITTED:
            raise DomainError("a submitted assignment cannot be reassigned")
        Assignment.objects.filter(pk=old.pk).update(status=Assignment.Status.EXPIRED, lease_expires_at=None)
        new = hand_assign(project=assignment.project, item=assignment.item, rater=to_rater, plan=plan, force=force)
        if slot is not None:
            until = timezone.now() + timedelta(seconds=lease_seconds_for(plan))
            PoolSlot.objects.filter(pk=slot[0]).update(
                state=PoolSlot.State.LEASED, rater=to_rater, assignment=new, lease_expires_at=until
            )
            Assignment.objects.filter(pk=new.pk).update(lease_expires_at=until)
    return new


def close_plan(*, plan: AssignmentPlan) -> AssignmentPlan:
    plan.status = AssignmentPlan.Status.CLOSED
    plan.save(update_fields=["status"])
    return plan
