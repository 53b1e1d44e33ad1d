"""Reads for curation: the ratings of items grouped for the policy, decisions, and rows for the
revision export. Everything is read in keyset chunks of items (never whole tables)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from django.db.models import Count, Exists, OuterRef, QuerySet

from agreement.selectors import submitted_annotations
from annotation.models import Item, Project
from judges.decides import rater_decides

from .models import ItemDecision
from .policy import Rating

CHUNK = 2000


def item_chunks(items: QuerySet[Item], *fields: str, chunk: int = CHUNK) -> Iterator[list[tuple]]:
    """``values_list("id", *fields)`` of the queryset in id order, ``chunk`` rows at a time
    (keyset pagination: flat memory, no long-lived cursor while the caller writes)."""
    last = 0
    while True:
        rows = list(items.filter(id__gt=last).order_by("id").values_list("id", *fields)[:chunk])
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def ratings_for(project: Project, item_ids: list[int]) -> dict[int, list[Rating]]:
    """Submitted regular annotations of these items (humans and model raters), as policy ratings."""
    out: dict[int, list[Rating]] = defaultdict(list)
    rows = (
        submitted_annotations(project)
        .filter(item_id__in=item_ids)
        .order_by("item_id", "id")
        .values_list(
            "item_id",
            "rater_id",
            "rater__name",
            "rater__kind",
            "answers",
            "derived",
            "assignment__presentation",
            "rater__backend",
            "rater__parameters",
        )
    )
    # what each judge does not decide (judges/decides.py) is missing for it under the policy
    undecided: dict[int, tuple[frozenset[str], dict[str, frozenset[str]]]] = {}
    rubric = project.rubric_version.parsed()
    for item_id, rater_id, name, kind, answers, derived, presentation, backend, params in rows:
        if rater_id not in undecided:
            d = rater_decides(kind=kind, backend=backend or "", parameters=params, preset=project.preset)
            undecided[rater_id] = (d.undecided(rubric), d.partial_flags(rubric)) if d is not None else (frozenset(), {})
        out[item_id].append(
            Rating(
                rater=f"{name}#{rater_id}",
                kind=kind,
                answers=answers or {},
                derived=derived or {},
                presentation=presentation or {},
                undecided=undecided[rater_id][0],
                partial=undecided[rater_id][1],
            )
        )
    return out


def decision_counts(project: Project) -> dict[str, int]:
    """Items by decision status; items without a decision count as pending."""
    counts = dict(ItemDecision.objects.filter(project=project).values_list("status").annotate(c=Count("id")))
    total = Item.objects.filter(project=project).count()
    decided = sum(counts.values())
    out = {s: counts.get(s, 0) for s in ("accepted", "rejected", "needs_revision", "pending")}
    out["pending"] += total - decided
    out["total"] = total
    return out


def decisions(project: Project, *, status: str | None = None) -> QuerySet[ItemDecision]:
    qs = ItemDecision.objects.filter(project=project).select_related("item", "decided_by").order_by("item_id")
    return qs.filter(status=status) if status else qs


def needs_revision_items(project: Project) -> QuerySet[Item]:
    """Items whose decision is needs_revision and that have no revised version yet."""
    revised = Item.objects.filter(parent=OuterRef("pk"))
    return (
        Item.objects.filter(project=project, decision__status="needs_revision").exclude(Exists(revised)).order_by("id")
    )


def exported_items(project: Project, scope: str) -> QuerySet[Item]:
    qs = Item.objects.filter(project=project)
    return qs.filter(decision__status="accepted") if scope == "accepted" else qs
