"""Assigning a sample: k annotators per item, eligibility and balance rules, caps, hand
assignment, and the pooled mode with leases.

Rules reduce to one idea: every one of an item's k places (a *slot*) may require annotator
attributes, written canonically as ``"nationality=china&..."`` ("" = anyone).
  * eligibility ``{"attribute": "nationality", "item_key": "country"}`` makes every slot of
    an item require ``nationality = <the item's country>``;
  * balance ``{"attribute": "nationality", "quota": {"China": 2, "Germany": 2}}`` makes two
    slots require China and two Germany (remaining slots up to k require only eligibility).
An annotator matches a slot when the slot's requirement is one of the subsets of their own
attribute pairs (:func:`rater_requirement_keys`).

Two modes:
  * pre-assigned: rows are written now, least-loaded eligible annotator first, caps honoured;
    slots nobody can fill are reported;
  * pooled: k :class:`PoolSlot` rows per item; an annotator asking for work claims one
    (``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL; one claim at a time per process on
    SQLite) and holds it for a lease. Expired leases go back to the pool; submitted slots
    are final, so an item never gets more than k submissions; the unique (item, rater)
    regular-assignment constraint stops anyone getting the same item twice.
"""

from __future__ import annotations

import heapq
import itertools
import json
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, Max, OuterRef, Q
from django.utils import timezone

from .bulk import insert_rows
from .models import (
    Assignment,
    AssignmentPlan,
    Item,
    Membership,
    PoolSlot,
    Project,
    Rater,
    Sample,
)
from .sampling import metadata_columns
from .services import ServiceError, _presentation

OPEN_STATUSES = (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS)
DEFAULT_LEASE_SECONDS = 30 * 60
# SQLite has no row locks: claims in one process are serialised by this lock (plus SQLite's
# own write lock and the compare-and-set update), which is what a dev server needs.
_SQLITE_CLAIM_LOCK = threading.Lock()


def norm(value: Any) -> str:
    return str(value).strip().casefold()


def canonical(pairs: Iterable[tuple[str, str]]) -> str:
    return "&".join(f"{a}={v}" for a, v in sorted(set(pairs)))


def lease_seconds_for(plan: AssignmentPlan | None, project: Project | None = None) -> int:
    if plan is not None and plan.lease_seconds:
        return int(plan.lease_seconds)
    project = project or (plan.project if plan is not None else None)
    if project is not None and project.options.get("lease_seconds"):
        return int(project.options["lease_seconds"])
    return int(getattr(settings, "HV_LEASE_SECONDS", DEFAULT_LEASE_SECONDS))


def plan_attributes(plan: AssignmentPlan) -> list[str]:
    attrs = [r["attribute"] for r in plan.eligibility]
    if plan.balance.get("attribute"):
        attrs.append(plan.balance["attribute"])
    return sorted(set(attrs))


def rater_values(rater: Rater, attribute: str) -> set[str]:
    raw = (rater.attributes or {}).get(attribute)
    if raw is None or raw == "":
        return set()
    if isinstance(raw, (list, tuple)):
        return {norm(v) for v in raw if str(v).strip()}
    return {norm(raw)}


def rater_requirement_keys(rater: Rater, plan: AssignmentPlan) -> list[str]:
    """Every slot requirement this annotator satisfies, most specific first ("" last)."""
    options = []
    for attr in plan_attributes(plan):
        options.append([None, *sorted((attr, v) for v in rater_values(rater, attr))])
    keys = {canonical(p for p in combo if p is not None) for combo in itertools.product(*options)}
    return sorted(keys, key=lambda k: (-k.count("=") if k else 1, k))


# --------------------------------------------------------------------------- rules
@dataclass
class Rules:
    k: int
    eligibility: list[dict[str, str]]
    balance: dict[str, Any]


def parse_rules(*, k: int, eligibility: list[dict[str, str]] | None, balance: dict[str, Any] | None) -> Rules:
    if not 1 <= int(k) <= 100:
        raise ServiceError("k (annotators per item) must be between 1 and 100")
    rules = []
    for rule in eligibility or []:
        attr, key = (rule.get("attribute") or "").strip(), (rule.get("item_key") or "").strip()
        key = key.removeprefix("meta.")
        if not attr or not key:
            raise ServiceError("an eligibility rule needs an annotator attribute and an item key")
        rules.append({"attribute": attr, "item_key": key})
    bal: dict[str, Any] = {}
    if balance and balance.get("quota"):
        attr = (balance.get("attribute") or "").strip()
        if not attr:
            raise ServiceError("a balance rule needs an annotator attribute")
        quota = {}
        for value, n in balance["quota"].items():
            try:
                n = int(n)
            except (TypeError, ValueError):
                raise ServiceError(f"balance quota for {value!r} must be a whole number") from None
            if n < 1:
                raise ServiceError(f"balance quota for {value!r} must be at least 1")
            quota[str(value).strip()] = n
        if sum(quota.values()) > int(k):
            raise ServiceError(f"the balance quotas add up to {sum(quota.values())}, more than k = {k}")
        bal = {"attribute": attr, "quota": quota}
    return Rules(k=int(k), eligibility=rules, balance=bal)


def parse_balance_text(attribute: str, text: str) -> dict[str, Any]:
    """"China:2, Germany:2" -> {"attribute": ..., "quota": {"China": 2, "Germany": 2}}."""
    quota: dict[str, int] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        value, sep, n = part.rpartition(":")
        if not sep or not value.strip():
            raise ServiceError(f"write the balance as value:count pairs, e.g. China:2, Germany:2 (got {part.strip()!r})")
        try:
            quota[value.strip()] = int(n)
        except ValueError:
            raise ServiceError(f"balance count {n.strip()!r} is not a whole number") from None
    return {"attribute": attribute.strip(), "quota": quota} if quota else {}


def slot_requirements(rules: Rules, item_values: dict[str, str]) -> tuple[list[str], str | None]:
    """The k requirement keys of one item's slots, or a reason the item cannot be staffed."""
    base: list[tuple[str, str]] = []
    for rule in rules.eligibility:
        value = item_values.get(rule["item_key"], "")
        if not value:
            return [], f"no value for {rule['item_key']!r}"
        base.append((rule["attribute"], norm(value)))
    reqs: list[str] = []
    fixed = dict(base)
    for value, n in (rules.balance.get("quota") or {}).items():
        attr = rules.balance["attribute"]
        if attr in fixed and fixed[attr] != norm(value):
            continue  # e.g. a Germany quota on an item only Chinese annotators may rate
        reqs.extend([canonical([*base, (attr, norm(value))])] * n)
    reqs.extend([canonical(base)] * (rules.k - len(reqs)))
    return reqs, None


def _item_value_rows(item_ids: list[int], keys: list[str]) -> Iterable[tuple[int, dict[str, str]]]:
    columns, annotations = metadata_columns(keys)
    for start in range(0, len(item_ids), 10_000):
        chunk = item_ids[start : start + 10_000]
        qs = Item.objects.filter(id__in=chunk).annotate(**annotations).values_list("id", *columns)
        found = {row[0]: row[1:] for row in qs}
        for item_id in chunk:
            vals = found.get(item_id, ("",) * len(keys))
            yield item_id, {k: ("" if v is None else str(v)) for k, v in zip(keys, vals, strict=True)}


def project_annotators(project: Project) -> list[Rater]:
    return list(
        Rater.objects.filter(
            kind=Rater.Kind.HUMAN,
            user__memberships__project=project, user__memberships__role=Membership.Role.ANNOTATOR,
        ).distinct().order_by("id")
    )


# --------------------------------------------------------------------------- creating a plan
def create_plan(
    *, sample: Sample, name: str = "", mode: str = AssignmentPlan.Mode.POOLED, k: int | None = None,
    eligibility: list[dict[str, str]] | None = None, balance: dict[str, Any] | None = None,
    cap_per_annotator: int | None = None, lease_seconds: int | None = None, seed: int | None = None,
    take_over: bool = False, created_by: AbstractBaseUser | None = None,
) -> AssignmentPlan:
    """Assign a sample. ``take_over`` makes the plans the project's only assignment strategy:
    the default "everyone gets every item" rows nobody has opened yet are removed, and new
    members and imports no longer get items automatically."""
    project = sample.project
    if mode not in AssignmentPlan.Mode.values:
        raise ServiceError(f"unknown mode {mode!r}: use preassigned or pooled")
    rules = parse_rules(k=k if k is not None else project.k_per_item, eligibility=eligibility, balance=balance)
    if cap_per_annotator is not None and cap_per_annotator < 1:
        raise ServiceError("the per-annotator cap must be at least 1 (or empty for none)")
    if lease_seconds is not None and not 30 <= lease_seconds <= 7 * 86400:
        raise ServiceError("the lease must be between 30 seconds and 7 days")
    seed = int(seed if seed is not None else sample.seed)
    item_ids = list(sample.members.order_by("item_id").values_list("item_id", flat=True))
    if not item_ids:
        raise ServiceError("the sample holds no items")
    keys = sorted({r["item_key"] for r in rules.eligibility})
    with transaction.atomic():
        if take_over:
            Assignment.objects.filter(
                project=project, plan__isnull=True, status=Assignment.Status.ASSIGNED, opened_at__isnull=True,
                purpose=Assignment.Purpose.REGULAR,
            ).delete()
        plan = AssignmentPlan.objects.create(
            project=project, sample=sample, name=(name or "").strip()[:200] or f"{sample.name}: k={rules.k}",
            mode=mode, k=rules.k, eligibility=rules.eligibility, balance=rules.balance,
            cap_per_annotator=cap_per_annotator, lease_seconds=lease_seconds, seed=seed,
            created_by=created_by if created_by is not None and created_by.is_authenticated else None,
        )
        rng = random.Random(seed)
        slot_reqs: list[tuple[int, list[str]]] = []
        unstaffable: dict[str, int] = {}
        for item_id, values in _item_value_rows(item_ids, keys):
            reqs, problem = slot_requirements(rules, values)
            if problem:
                unstaffable[problem] = unstaffable.get(problem, 0) + 1
                continue
            slot_reqs.append((item_id, reqs))
        rng.shuffle(slot_reqs)
        report: dict[str, Any] = {
            "items": len(item_ids), "slots": sum(len(r) for _, r in slot_reqs),
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
        raise ServiceError("the project has no annotators yet: add annotators before pre-assigning")
    load = dict(
        Assignment.objects.filter(project=project, rater__in=raters).exclude(
            status__in=[Assignment.Status.EXPIRED, Assignment.Status.SKIPPED]
        ).values_list("rater_id").annotate(c=Count("id"))
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
            new.setdefault(chosen, []).append((item_id, _presentation(project, rubric, rng)))
    start_pos = dict(
        Assignment.objects.filter(project=project).values_list("rater_id").annotate(p=Max("position"))
    )
    now = timezone.now()

    def rows():
        for rid, entries in new.items():
            rng.shuffle(entries)  # randomised item order per annotator, stored as position
            base = (start_pos.get(rid) or 0) + 1
            for offset, (item_id, presentation) in enumerate(entries):
                yield (project.id, item_id, rid, Assignment.Status.ASSIGNED, Assignment.Purpose.REGULAR,
                       base + offset, json.dumps(presentation), "", now, plan.id)

    created = insert_rows(
        Assignment,
        ["project", "item", "rater", "status", "purpose", "position", "presentation", "skip_reason", "created_at",
         "plan"],
        rows(),
    )
    return {
        "assignments_created": created,
        "unfilled_slots": sum(unfilled.values()),
        "unfilled_by_requirement": unfilled,
        "per_annotator": {str(rid): len(v) for rid, v in new.items()},
    }


# --------------------------------------------------------------------------- pooled claiming
class _LostRace(Exception):
    pass


def _claim_in_plan(plan: AssignmentPlan, rater: Rater) -> Assignment | None:
    present = set(plan.report.get("requires", [])) if plan.report else None
    reqs = [r for r in rater_requirement_keys(rater, plan) if present is None or r in present]
    if not reqs:
        return None
    if plan.cap_per_annotator is not None:
        mine = Assignment.objects.filter(plan=plan, rater=rater).exclude(
            status__in=[Assignment.Status.EXPIRED, Assignment.Status.SKIPPED]
        ).count()
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
                .select_for_update(skip_locked=True).order_by("lease_expires_at").values_list(*fields).first()
            )
            if slot is None:
                for req in reqs:
                    slot = (
                        base.filter(state=PoolSlot.State.OPEN, requires=req)
                        .select_for_update(skip_locked=True).order_by("order_key").values_list(*fields).first()
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
                        project_id=plan.project_id, item_id=item_id, rater=rater, plan=plan,
                        status=Assignment.Status.ASSIGNED, purpose=Assignment.Purpose.REGULAR, position=0,
                        presentation=_presentation(plan.project, rubric, random.Random()),
                        lease_expires_at=now + lease,
                    )
                    # Compare-and-set: the guard on SQLite; always true under the row lock on PostgreSQL.
                    took = PoolSlot.objects.filter(pk=slot_id).filter(
                        Q(state=PoolSlot.State.OPEN) | Q(state=PoolSlot.State.LEASED, lease_expires_at__lt=now)
                    ).update(state=PoolSlot.State.LEASED, rater=rater, lease_expires_at=now + lease,
                             assignment=assignment)
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
        AssignmentPlan.objects.filter(project=project, mode=AssignmentPlan.Mode.POOLED,
                                      status=AssignmentPlan.Status.ACTIVE).select_related("project__rubric_version")
        .order_by("created_at", "id")
    )
    for plan in plans:
        plan.project = project
        if connection.vendor == "sqlite":
            with _SQLITE_CLAIM_LOCK:
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
            PoolSlot.objects.filter(pk__in=ids).update(state=PoolSlot.State.OPEN, rater=None, assignment=None,
                                                       lease_expires_at=None)
            expired += len(ids)


def lock_slot_for(assignment_id: int) -> tuple[int, str] | None:
    """Lock the pool slot held by this assignment (before the assignment row: the same order
    as a claim, so a submit and a reclaim never deadlock). None when it holds none."""
    return (
        PoolSlot.objects.select_for_update().filter(assignment_id=assignment_id).values_list("id", "state").first()
    )


def release_slot(slot_id: int, *, submitted: bool) -> None:
    if submitted:
        PoolSlot.objects.filter(pk=slot_id).update(state=PoolSlot.State.SUBMITTED, lease_expires_at=None)
    else:
        PoolSlot.objects.filter(pk=slot_id).update(state=PoolSlot.State.OPEN, rater=None, assignment=None,
                                                   lease_expires_at=None)


# --------------------------------------------------------------------------- hand assignment
def eligible_for(rater: Rater, plan: AssignmentPlan, item: Item) -> bool:
    rules = Rules(k=plan.k, eligibility=plan.eligibility, balance=plan.balance)
    keys = sorted({r["item_key"] for r in plan.eligibility})
    values = next(iter(_item_value_rows([item.id], keys)))[1] if keys else {}
    reqs, problem = slot_requirements(rules, values)
    return problem is None and bool(set(reqs) & set(rater_requirement_keys(rater, plan)))


def hand_assign(
    *, project: Project, item: Item, rater: Rater, plan: AssignmentPlan | None = None, force: bool = False,
) -> Assignment:
    """Give one item to one annotator by hand (optionally within a plan, checking its rules)."""
    if item.project_id != project.id:
        raise ServiceError("that item is not in this project")
    if not Membership.objects.filter(project=project, user_id=rater.user_id, role=Membership.Role.ANNOTATOR).exists():
        raise ServiceError(f"{rater.name} is not an annotator of this project")
    if plan is not None and not force and not eligible_for(rater, plan, item):
        raise ServiceError(f"{rater.name} is not eligible for {item.external_id} under the plan's rules")
    rubric = project.rubric_version.parsed()
    with transaction.atomic():
        row = (
            Assignment.objects.select_for_update()
            .filter(item=item, rater=rater, purpose=Assignment.Purpose.REGULAR).first()
        )
        if row is not None:
            if row.status in (Assignment.Status.SUBMITTED, *OPEN_STATUSES):
                raise ServiceError(f"{rater.name} already has {item.external_id} ({row.get_status_display().lower()})")
            row.status, row.plan, row.lease_expires_at, row.skip_reason = Assignment.Status.ASSIGNED, plan, None, ""
            row.save(update_fields=["status", "plan", "lease_expires_at", "skip_reason"])
            return row
        position = (Assignment.objects.filter(project=project, rater=rater).aggregate(m=Max("position"))["m"] or 0) + 1
        return Assignment.objects.create(
            project=project, item=item, rater=rater, plan=plan, position=position,
            presentation=_presentation(project, rubric, random.Random()),
        )


def reassign(*, assignment: Assignment, to_rater: Rater, force: bool = False) -> Assignment:
    """Move an unfinished assignment to another annotator: the old row is kept as expired (an
    audit trail), the new annotator gets the item (in the same pool slot when pooled)."""
    if assignment.status == Assignment.Status.SUBMITTED:
        raise ServiceError("a submitted assignment cannot be reassigned")
    if assignment.rater_id == to_rater.id:
        raise ServiceError("the assignment already belongs to that annotator")
    plan = assignment.plan
    with transaction.atomic():
        slot = lock_slot_for(assignment.id)
        old = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if old.status == Assignment.Status.SUBMITTED:
            raise ServiceError("a submitted assignment cannot be reassigned")
        Assignment.objects.filter(pk=old.pk).update(status=Assignment.Status.EXPIRED, lease_expires_at=None)
        new = hand_assign(project=assignment.project, item=assignment.item, rater=to_rater, plan=plan, force=force)
        if slot is not None:
            until = timezone.now() + timedelta(seconds=lease_seconds_for(plan))
            PoolSlot.objects.filter(pk=slot[0]).update(state=PoolSlot.State.LEASED, rater=to_rater, assignment=new,
                                                       lease_expires_at=until)
            Assignment.objects.filter(pk=new.pk).update(lease_expires_at=until)
    return new


def close_plan(*, plan: AssignmentPlan) -> AssignmentPlan:
    plan.status = AssignmentPlan.Status.CLOSED
    plan.save(update_fields=["status"])
    return plan
