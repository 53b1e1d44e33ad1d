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
from collections import Counter
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.assigning import draw_presentation
from annotation.bulk import insert_rows
from annotation.models import Assignment, Item, Membership, Project, Rater
from annotation.projects import UNOPENED_DEFAULT_ROWS
from core.errors import DomainError
from studies.models import AssignmentPlan, PoolSlot, Sample

from .pool import OPEN_STATUSES, lease_seconds_for, lock_slot_for
from .rules import (
    Rules,
    eligible_for,
    item_value_rows,
    norm,
    parse_rules,
    rater_requirement_keys,
    slot_requirements,
)

#: profile keys that are not attributes a plan matches on: the crowd flag, which a Prolific
#: participant's profile carries (the UI language is a preference of the account, not a profile key)
NOT_MATCHED_KEYS = frozenset({"crowd"})

#: the default rows a plan that takes the project over removes: never opened, outside any plan
TAKE_OVER_ROWS = UNOPENED_DEFAULT_ROWS


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


def attribute_values(project: Project) -> dict[str, dict[str, int]]:
    """The attribute keys and values in the profiles of the project's annotators, each value with
    how many annotators have it (``{"nationality": {"China": 2, "Germany": 2}}``): what a plan's
    eligibility and balance rules can match. Values are shown as first written; values that
    differ only in case or spaces are one value, as the rules compare them."""
    return _attribute_values(project_annotators(project))


def _attribute_values(raters: list[Rater]) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, tuple[str, int]]] = {}
    for rater in raters:
        for key, raw in (rater.attributes or {}).items():
            if key in NOT_MATCHED_KEYS or isinstance(raw, (bool, dict)) or raw is None:
                continue
            shown = raw if isinstance(raw, (list, tuple)) else [raw]
            seen: set[str] = set()
            for value in shown:
                text = str(value).strip()
                if not text or norm(text) in seen:
                    continue
                seen.add(norm(text))
                first, n = found.setdefault(key, {}).get(norm(text), (text, 0))
                found[key][norm(text)] = (first, n + 1)
    return {
        key: dict(sorted(values.values(), key=lambda pair: pair[0].casefold())) for key, values in sorted(found.items())
    }


def _check_options(*, mode: str, cap_per_annotator: int | None, lease_seconds: int | None) -> None:
    if mode not in AssignmentPlan.Mode.values:
        raise DomainError(f"unknown mode {mode!r}: use preassigned or pooled")
    if cap_per_annotator is not None and cap_per_annotator < 1:
        raise DomainError("the per-annotator cap must be at least 1 (or empty for none)")
    if lease_seconds is not None and not 30 <= lease_seconds <= 7 * 86400:
        raise DomainError("the lease must be between 30 seconds and 7 days")


def _slot_requirements(sample: Sample, rules: Rules) -> tuple[list[int], list[tuple[int, list[str]]], dict[str, int]]:
    """The sample's item ids, each staffable item's k slot requirements (in item order) and,
    per reason, how many items cannot be staffed at all."""
    item_ids = list(sample.members.order_by("item_id").values_list("item_id", flat=True))
    if not item_ids:
        raise DomainError("the sample holds no items")
    keys = sorted({r["item_key"] for r in rules.eligibility})
    slot_reqs: list[tuple[int, list[str]]] = []
    unstaffable: dict[str, int] = {}
    for item_id, values in item_value_rows(item_ids, keys):
        reqs, problem = slot_requirements(rules, values)
        if problem:
            unstaffable[problem] = unstaffable.get(problem, 0) + 1
            continue
        slot_reqs.append((item_id, reqs))
    return item_ids, slot_reqs, unstaffable


class UnfilledPlan(DomainError):
    """A plan refused because places cannot be filled with the project's current annotators
    (asked for with ``refuse_unfilled``); ``forecast`` is what :func:`forecast_plan` found."""

    def __init__(self, message: str, forecast: dict[str, Any]) -> None:
        super().__init__(message)
        self.forecast = forecast


def forecast_plan(
    *,
    sample: Sample,
    mode: str = AssignmentPlan.Mode.POOLED,
    k: int | None = None,
    eligibility: list[dict[str, str]] | None = None,
    balance: dict[str, Any] | None = None,
    cap_per_annotator: int | None = None,
    seed: int | None = None,
    take_over: bool = False,
) -> dict[str, Any]:
    """What :func:`create_plan` would make of these parameters, writing nothing: the mix of
    places per item, and how many places the project's current annotators can fill (the same
    least-loaded choice a pre-assigned plan makes, caps and one place per item and annotator
    included; for a pooled plan, what they could claim between them).

    ``needs_confirmation`` is set when a place requires what no current annotator has (e.g. a
    quota "Chinese" when profiles say "China"), when items cannot be staffed at all, or when a
    pre-assigned plan would leave places empty; ``problems`` says why, in words."""
    project = sample.project
    _check_options(mode=mode, cap_per_annotator=cap_per_annotator, lease_seconds=None)
    rules = parse_rules(k=k if k is not None else project.k_per_item, eligibility=eligibility, balance=balance)
    item_ids, slot_reqs, unstaffable = _slot_requirements(sample, rules)
    draft = AssignmentPlan(
        project=project,
        sample=sample,
        mode=mode,
        k=rules.k,
        eligibility=rules.eligibility,
        balance=rules.balance,
        cap_per_annotator=cap_per_annotator,
    )
    rng = random.Random(int(seed if seed is not None else sample.seed))
    rng.shuffle(slot_reqs)
    raters = project_annotators(project)
    chosen, unfilled = _choose(draft, raters, slot_reqs, rng, ignore=TAKE_OVER_ROWS if take_over else None)
    places = sum(len(reqs) for _, reqs in slot_reqs)
    matching: dict[str, int] = Counter()
    for rater in raters:
        matching.update(rater_requirement_keys(rater, draft))
    per_req: Counter[str] = Counter(req for _, reqs in slot_reqs for req in reqs)
    shown = _value_spellings(raters, rules)
    mixes: Counter[tuple[tuple[str, int], ...]] = Counter(tuple(sorted(Counter(reqs).items())) for _, reqs in slot_reqs)
    requirements = [
        {
            "requires": req,
            "label": requirement_label(req, shown),
            "places": n,
            "annotators": matching.get(req, 0),
            "unfilled": unfilled.get(req, 0),
            "fillable": n - unfilled.get(req, 0),
        }
        for req, n in sorted(per_req.items())
    ]
    nobody = [r for r in requirements if not r["annotators"]]
    problems: list[str] = []
    if not raters:
        problems.append(_("the project has no annotators yet"))
    profiles = _attribute_values(raters)
    for r in nobody if raters else []:
        attrs = sorted({pair.partition("=")[0] for pair in r["requires"].split("&") if pair})
        have = "; ".join(
            _("their %(attribute)s values: %(values)s") % {"attribute": a, "values": ", ".join(profiles[a])}
            if a in profiles
            else _("no annotator has a %(attribute)s") % {"attribute": a}
            for a in attrs
        )
        problems.append(
            _("%(what)s: no annotator of the project matches (%(places)d place(s); %(have)s)")
            % {"what": r["label"], "places": r["places"], "have": have}
        )
    for why, n in sorted(unstaffable.items()):
        problems.append(
            ngettext("%(n)d item cannot be staffed: %(why)s", "%(n)d items cannot be staffed: %(why)s", n)
            % {"n": n, "why": why}
        )
    n_unfilled = sum(unfilled.values())
    if mode == AssignmentPlan.Mode.PREASSIGNED and n_unfilled and raters and not nobody:
        problems.append(
            _("%(n)d of %(places)d place(s) would stay empty: too few matching annotators (or caps)")
            % {"n": n_unfilled, "places": places}
        )
    return {
        "mode": mode,
        "k": rules.k,
        "items": len(item_ids),
        "staffable_items": len(slot_reqs),
        "places": places,
        "fillable": places - n_unfilled,
        "unfilled": n_unfilled,
        "annotators": len(raters),
        "annotators_with_places": len({rid for rid, _ in chosen}),
        "mix": [
            {
                "items": n,
                "places": [{"label": requirement_label(req, shown), "n": count} for req, count in mix],
            }
            for mix, n in sorted(mixes.items(), key=lambda pair: (-pair[1], pair[0]))
        ],
        "requirements": requirements,
        "unstaffable_items": [f"{n} item(s): {why}" for why, n in sorted(unstaffable.items())],
        "problems": problems,
        "needs_confirmation": bool(problems),
    }


def _value_spellings(raters: list[Rater], rules: Rules) -> dict[str, str]:
    """Normalised value -> a spelling to show (the first annotator's, else the rule's own)."""
    shown: dict[str, str] = {}
    for rater in raters:
        for raw in (rater.attributes or {}).values():
            for value in raw if isinstance(raw, (list, tuple)) else [raw]:
                if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
                    shown.setdefault(norm(value), str(value).strip())
    for value in rules.balance.get("quota") or {}:
        shown.setdefault(norm(value), str(value))
    return shown


def requirement_label(req: str, shown: dict[str, str] | None = None) -> str:
    """A slot requirement in words: ``"nationality=china"`` -> ``"nationality = China"``."""
    if not req:
        return _("anyone")
    parts = []
    for pair in req.split("&"):
        attr, _sep, value = pair.partition("=")
        parts.append(f"{attr} = {(shown or {}).get(value, value)}")
    return ", ".join(parts)


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
    refuse_unfilled: bool = False,
) -> AssignmentPlan:
    """Assign a sample. ``take_over`` makes the plans the project's only assignment strategy:
    the default "everyone gets every item" rows nobody has opened yet are removed, and new
    members and imports no longer get items automatically.

    ``refuse_unfilled`` (the plan form, until the researcher confirms): refuse with
    :class:`UnfilledPlan`, before anything is written (default rows included), a plan whose
    forecast needs confirmation (:func:`forecast_plan`)."""
    project = sample.project
    _check_options(mode=mode, cap_per_annotator=cap_per_annotator, lease_seconds=lease_seconds)
    rules = parse_rules(k=k if k is not None else project.k_per_item, eligibility=eligibility, balance=balance)
    seed = int(seed if seed is not None else sample.seed)
    if refuse_unfilled:
        forecast = forecast_plan(
            sample=sample,
            mode=mode,
            k=rules.k,
            eligibility=rules.eligibility,
            balance=rules.balance,
            cap_per_annotator=cap_per_annotator,
            seed=seed,
            take_over=take_over,
        )
        if forecast["needs_confirmation"]:
            raise UnfilledPlan(
                _("Nothing was created: %(problems)s. Fix the plan, or confirm to create it with these places open.")
                % {"problems": "; ".join(forecast["problems"])},
                forecast,
            )
    item_ids, slot_reqs, unstaffable = _slot_requirements(sample, rules)
    with transaction.atomic():
        if take_over:
            Assignment.objects.filter(TAKE_OVER_ROWS, project=project).delete()
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


def _choose(
    plan: AssignmentPlan,
    raters: list[Rater],
    slot_reqs: list[tuple[int, list[str]]],
    rng: random.Random,
    *,
    ignore: Q | None = None,
) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """Who takes which place: per slot in order, the least-loaded matching annotator who does
    not have the item yet and is under the cap. Returns the (rater id, item id) choices in
    order and, per requirement, the places nobody could take. ``ignore``: existing rows to
    leave out (those a take-over is about to remove). Reads only."""
    project = plan.project
    rows = Assignment.objects.filter(project=project, rater__in=raters)
    if ignore is not None:
        rows = rows.exclude(ignore)
    load = dict(
        rows.exclude(status__in=[Assignment.Status.EXPIRED, Assignment.Status.SKIPPED])
        .values_list("rater_id")
        .annotate(c=Count("id"))
    )
    plan_load = {r.id: 0 for r in raters}
    existing: dict[int, set[int]] = {}
    item_ids = [i for i, _ in slot_reqs]
    for start in range(0, len(item_ids), 10_000):
        held = Assignment.objects.filter(
            item_id__in=item_ids[start : start + 10_000], purpose=Assignment.Purpose.REGULAR
        )
        if ignore is not None:
            held = held.exclude(ignore)
        for item_id, rater_id in held.values_list("item_id", "rater_id"):
            existing.setdefault(item_id, set()).add(rater_id)
    tiebreak = {r.id: rng.random() for r in raters}
    by_req: dict[str, list[tuple[int, float, int]]] = {}
    for r in raters:
        for key in rater_requirement_keys(r, plan):
            by_req.setdefault(key, []).append((load.get(r.id, 0), tiebreak[r.id], r.id))
    for heap in by_req.values():
        heapq.heapify(heap)
    cap = plan.cap_per_annotator
    chosen_rows: list[tuple[int, int]] = []
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
                unfilled[req] = unfilled.get(req, 0) + 1
                continue
            taken.add(chosen)
            load[chosen] = load.get(chosen, 0) + 1
            plan_load[chosen] += 1
            heapq.heappush(heap, (load[chosen], tiebreak[chosen], chosen))
            chosen_rows.append((chosen, item_id))
    return chosen_rows, unfilled


def _preassign(plan: AssignmentPlan, slot_reqs: list[tuple[int, list[str]]], rng: random.Random) -> dict[str, Any]:
    project = plan.project
    raters = project_annotators(project)
    if not raters:
        raise DomainError("the project has no annotators yet: add annotators before pre-assigning")
    chosen, unfilled = _choose(plan, raters, slot_reqs, rng)
    rubric = project.rubric_version.parsed()
    new: dict[int, list[tuple[int, dict]]] = {}
    for rid, item_id in chosen:
        new.setdefault(rid, []).append((item_id, draw_presentation(project, rubric, rng)))
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
        "unfilled_by_requirement": {req or "anyone": n for req, n in unfilled.items()},
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
    rng: random.Random | None = None,
) -> Assignment:
    """Give one item to one annotator by hand (optionally within a plan, checking its rules;
    ``force`` gives it whatever they say). ``rng`` draws the item's presentation (the pair order):
    a seeded one makes the draw reproducible (the demo's), none a fresh one."""
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
            presentation=draw_presentation(project, rubric, rng or random.Random()),
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


def plan_footprint(plan: AssignmentPlan) -> dict[str, int]:
    """What deleting the plan does, counted: ``released`` unstarted rows (assigned, never
    opened) and ``open_places`` of its pool go; ``started`` (opened, not submitted),
    ``submitted`` and ``closed`` (skipped or expired) rows stay, outside any plan."""
    rows = Assignment.objects.filter(plan=plan)
    unstarted = Q(status=Assignment.Status.ASSIGNED, opened_at__isnull=True)
    return {
        "released": rows.filter(unstarted).count(),
        "started": rows.filter(status__in=OPEN_STATUSES).exclude(unstarted).count(),
        "submitted": rows.filter(status=Assignment.Status.SUBMITTED).count(),
        "closed": rows.filter(status__in=[Assignment.Status.SKIPPED, Assignment.Status.EXPIRED]).count(),
        "open_places": PoolSlot.objects.filter(plan=plan, state=PoolSlot.State.OPEN).count(),
    }


def delete_plan(*, plan: AssignmentPlan) -> dict[str, int]:
    """Delete a plan in one transaction and return its :func:`plan_footprint`.

    Unstarted assignments are released (deleted), so nobody gets those items from this plan any
    more, and its pool goes with it. Work already begun is never thrown away: started rows stay
    in their annotator's queue to be finished (their pooled hold no longer expires), submitted
    rows keep their answers, skipped and expired rows stay as history; all of them leave the
    plan. The sample stays, and the project keeps its assignment strategy."""
    with transaction.atomic():
        # the plan row, then its slots: a claim or a submit of this plan locks a slot first, so
        # one that is under way finishes before the rows are counted and changed
        if not AssignmentPlan.objects.select_for_update().filter(pk=plan.pk).exists():
            raise DomainError(_("no such plan"), code="not_found")
        list(PoolSlot.objects.select_for_update().filter(plan=plan).values_list("id", flat=True))
        footprint = plan_footprint(plan)
        # slots first: a taken slot must keep its assignment (slot_taken_has_assignment)
        PoolSlot.objects.filter(plan=plan).delete()
        Assignment.objects.filter(plan=plan, status=Assignment.Status.ASSIGNED, opened_at__isnull=True).delete()
        Assignment.objects.filter(plan=plan).update(plan=None, lease_expires_at=None)
        plan.delete()
    return footprint
