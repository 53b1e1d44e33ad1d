"""The default assignment strategy: every annotator of the project gets items until each item
has k annotators, load spread by rotation. Study designs (``studies.plans``) take a project
over from it; then members and imports get no items automatically."""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Iterable
from typing import Any

from django.db.models import Count, Max
from django.utils import timezone

from .bulk import insert_rows
from .models import Assignment, Item, Membership, Project, Rater
from .rubric import Rubric

BATCH = 2000


def uses_default_assignment(project: Project) -> bool:
    """False once assignment plans have taken the project over (``options["assignment"] ==
    "plans"``): then members and imports get no items automatically."""
    return project.options.get("assignment", "default") != "plans"


def draw_presentation(project: Project, rubric: Rubric, rng: random.Random) -> dict[str, Any]:
    """How this assignment shows the item: for each pairwise question, the order of its two
    sides, drawn at random when the project randomises pair order (stored on the assignment,
    so the answer is read back in the order the annotator saw)."""
    order: dict[str, list[str]] = {}
    for q in rubric.questions:
        if q.type == "pairwise" and q.pair:
            pair = list(q.pair)
            if project.randomise_pair_order:
                rng.shuffle(pair)
            order[q.id] = pair
    return {"pair_order": order} if order else {}


def assign_all_annotators(*, project: Project, items: Iterable[Item] | None = None) -> int:
    """The minimal strategy: every annotator of the project gets items until each item has k
    annotators, spreading load by rotation. Idempotent (existing rows are kept). Returns the
    number of assignments created. Richer strategies (stratified samples, eligibility, QC)
    create the same rows."""
    raters = list(
        Rater.objects.filter(
            user__memberships__project=project, user__memberships__role=Membership.Role.ANNOTATOR
        ).order_by("id")
    )
    if not raters:
        return 0
    rubric = project.rubric_version.parsed()
    item_qs = Item.objects.filter(project=project) if items is None else None
    item_list = list(item_qs.order_by("id").only("id")) if item_qs is not None else list(items)
    existing: dict[int, set[int]] = {}
    ids = [it.id for it in item_list]
    for chunk_start in range(0, len(ids), 5000):
        chunk = ids[chunk_start : chunk_start + 5000]
        for item_id, rater_id in Assignment.objects.filter(
            item_id__in=chunk, purpose=Assignment.Purpose.REGULAR
        ).values_list("item_id", "rater_id"):
            existing.setdefault(item_id, set()).add(rater_id)
    load = dict(
        Assignment.objects.filter(project=project, rater__in=raters).values_list("rater_id").annotate(c=Count("id"))
    )
    next_position = {
        r: (p or 0) + 1
        for r, p in Assignment.objects.filter(project=project).values_list("rater_id").annotate(p=Max("position"))
    }
    rng = random.Random(secrets.randbits(64))
    k = min(project.k_per_item, len(raters))
    new_rows: list[Assignment] = []
    for item in item_list:
        have = existing.get(item.id, set())
        need = k - len(have)
        if need <= 0:
            continue
        candidates = sorted((r for r in raters if r.id not in have), key=lambda r: (load.get(r.id, 0), r.id))
        for rater in candidates[:need]:
            load[rater.id] = load.get(rater.id, 0) + 1
            position = next_position.get(rater.id, 1)
            next_position[rater.id] = position + 1
            new_rows.append(
                Assignment(
                    project=project,
                    item_id=item.id,
                    rater=rater,
                    position=position,
                    presentation=draw_presentation(project, rubric, rng),
                )
            )
    Assignment.objects.bulk_create(new_rows, batch_size=BATCH, ignore_conflicts=True)
    return len(new_rows)


def assign_new_items(*, project: Project, item_ids: list[int]) -> int:
    """The same strategy as :func:`assign_all_annotators` for items that have no assignment yet
    (a fresh import): annotators take turns in order of their current load, so k-overlap is
    exact and the load stays balanced, written as plain rows in one pass."""
    raters = list(
        Rater.objects.filter(user__memberships__project=project, user__memberships__role=Membership.Role.ANNOTATOR)
        .order_by("id")
        .values_list("id", flat=True)
    )
    if not raters or not item_ids:
        return 0
    load = dict(Assignment.objects.filter(project=project).values_list("rater_id").annotate(c=Count("id")))
    next_position = {
        r: (p or 0) + 1
        for r, p in Assignment.objects.filter(project=project).values_list("rater_id").annotate(p=Max("position"))
    }
    raters.sort(key=lambda r: (load.get(r, 0), r))
    n, k = len(raters), min(project.k_per_item, len(raters))
    rubric = project.rubric_version.parsed()
    rng = random.Random(secrets.randbits(64))
    # A presentation is one of a few JSON texts (each pair question in one of its two orders):
    # build them once and draw per assignment.
    pairwise = [q for q in rubric.questions if q.type == "pairwise" and q.pair]
    variants = [{}]
    for q in pairwise:
        orders = [list(q.pair), list(reversed(q.pair))] if project.randomise_pair_order else [list(q.pair)]
        variants = [{**v, q.id: o} for v in variants for o in orders]
    texts = [json.dumps({"pair_order": v}) if v else "{}" for v in variants]
    now = timezone.now()

    def presentation() -> str:
        return texts[rng.randrange(len(texts))] if len(texts) > 1 else texts[0]

    def rows():
        turn = 0
        for item_id in item_ids:
            for _ in range(k):
                rater = raters[turn % n]
                turn += 1
                position = next_position.get(rater, 1)
                next_position[rater] = position + 1
                yield (
                    project.id,
                    item_id,
                    rater,
                    Assignment.Status.ASSIGNED,
                    Assignment.Purpose.REGULAR,
                    position,
                    presentation(),
                    "",
                    now,
                )

    return insert_rows(
        Assignment,
        ["project", "item", "rater", "status", "purpose", "position", "presentation", "skip_reason", "created_at"],
        rows(),
    )
