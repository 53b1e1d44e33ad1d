"""The reads of the human side, tuned once here."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from .models import Annotation, Assignment, Asset, Item, Membership, Project, Rater

OPEN_STATUSES = (Assignment.Status.IN_PROGRESS, Assignment.Status.ASSIGNED)


def can_create_projects(user: AbstractBaseUser) -> bool:
    return bool(user.is_authenticated and (user.is_superuser or user.has_perm("annotation.add_project")))


def managed_projects(user: AbstractBaseUser) -> QuerySet[Project]:
    """Projects a user may administer: superusers all, researchers those they belong to."""
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(
        memberships__user=user, memberships__role=Membership.Role.RESEARCHER
    ).distinct()


def can_manage(user: AbstractBaseUser, project: Project) -> bool:
    return bool(user.is_authenticated) and managed_projects(user).filter(pk=project.pk).exists()


def annotator_projects(user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(
        memberships__user=user, memberships__role=Membership.Role.ANNOTATOR
    ).distinct()


def rater_of(user: AbstractBaseUser) -> Rater | None:
    if not user.is_authenticated:
        return None
    return Rater.objects.filter(user=user).first()


def my_assignment(user: AbstractBaseUser, assignment_id: int) -> Assignment | None:
    """The assignment only if it is this user's own; anyone else gets None (a 404).

    The rubric schema is deferred: ``RubricVersion.parsed()`` serves it from the per-process
    cache keyed by (id, schema hash), so the hot path never re-reads and decodes it."""
    return (
        Assignment.objects.select_related("item", "project__rubric_version", "rater")
        .defer("project__rubric_version__schema")
        .filter(pk=assignment_id, rater__user=user, rater__kind=Rater.Kind.HUMAN)
        .first()
    )


def next_assignment_for(rater: Rater, project: Project) -> Assignment | None:
    """The rater's next open assignment in queue order (one already opened comes first).

    One query per status, each an index range scan on (rater, project, status, position) that
    stops at the first row; an ``IN`` over both statuses would sort the whole queue."""
    for status in OPEN_STATUSES:
        found = (
            Assignment.objects.filter(rater=rater, project=project, status=status)
            .order_by("position", "id")
            .only("id")
            .first()
        )
        if found is not None:
            return found
    return None


def queue_progress(rater: Rater, project: Project) -> dict[str, int]:
    counts = dict(
        Assignment.objects.filter(rater=rater, project=project)
        .exclude(status=Assignment.Status.EXPIRED)
        .values_list("status")
        .annotate(c=Count("id"))
    )
    assigned = sum(counts.values())
    done = counts.get(Assignment.Status.SUBMITTED, 0)
    return {
        "assigned": assigned,
        "done": done,
        "skipped": counts.get(Assignment.Status.SKIPPED, 0),
        "remaining": assigned - done - counts.get(Assignment.Status.SKIPPED, 0),
        "percent": round(100 * done / assigned) if assigned else 0,
    }


def my_queues(user: AbstractBaseUser) -> list[dict[str, Any]]:
    rater = rater_of(user)
    if rater is None:
        return []
    return [
        {"project": p, "progress": queue_progress(rater, p)}
        for p in annotator_projects(user).select_related("rubric_version").order_by("name")
    ]


def my_assignments(user: AbstractBaseUser, project: Project | None = None) -> QuerySet[Assignment]:
    qs = Assignment.objects.filter(rater__user=user).select_related("item", "project").order_by(
        "project_id", "position", "id"
    )
    return qs.filter(project=project) if project is not None else qs


def project_progress(project: Project) -> dict[str, Any]:
    by_status = dict(
        Assignment.objects.filter(project=project).values_list("status").annotate(c=Count("id"))
    )
    return {
        "items": Item.objects.filter(project=project).count(),
        "assignments": sum(by_status.values()),
        "by_status": by_status,
        "annotations": Annotation.objects.filter(item__project=project).count(),
    }


def per_annotator_progress(project: Project) -> list[dict[str, Any]]:
    rows = (
        Assignment.objects.filter(project=project)
        .values("rater__name")
        .annotate(
            assigned=Count("id"),
            done=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
            skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
        )
        .order_by("rater__name")
    )
    return list(rows)


def user_may_view_asset(user: AbstractBaseUser, asset: Asset) -> bool:
    """Researchers of a project using the image, or an annotator with an assignment showing it."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return Item.objects.filter(assets=asset).filter(
        Q(project__memberships__user=user, project__memberships__role=Membership.Role.RESEARCHER)
        | Q(assignments__rater__user=user)
    ).exists()


# ------------------------------------------------------------------------- design & dashboard
STATUS_KEYS = ("assigned", "in_progress", "submitted", "skipped", "expired")


def _status_counts(qs, group: str) -> dict[Any, dict[str, int]]:
    out: dict[Any, dict[str, int]] = {}
    for key, status, n in qs.values_list(group, "status").annotate(c=Count("id")).order_by():
        out.setdefault(key, dict.fromkeys(STATUS_KEYS, 0))[status] = n
    return out


def progress_by_stratum(plan) -> list[dict[str, Any]]:
    """Per stratum of the plan's sample: items, places (items x k), and where the work stands."""
    from django.db.models import OuterRef, Subquery

    from .models import PoolSlot, SampleItem

    stratum = SampleItem.objects.filter(sample_id=plan.sample_id, item_id=OuterRef("item_id")).values("stratum")[:1]
    by_status = _status_counts(
        Assignment.objects.filter(plan=plan).annotate(stratum=Subquery(stratum)), "stratum"
    )
    items = dict(SampleItem.objects.filter(sample_id=plan.sample_id).values_list("stratum").annotate(c=Count("id")))
    open_slots = dict(
        PoolSlot.objects.filter(plan=plan, state=PoolSlot.State.OPEN).annotate(stratum=Subquery(stratum))
        .values_list("stratum").annotate(c=Count("id")).order_by()
    )
    rows = []
    for name in sorted(items):
        counts = by_status.get(name, dict.fromkeys(STATUS_KEYS, 0))
        rows.append({"stratum": name, "items": items[name], "places": items[name] * plan.k, **counts,
                     "open_in_pool": open_slots.get(name, 0),
                     "percent": round(100 * counts["submitted"] / (items[name] * plan.k)) if items[name] else 0})
    return rows


def progress_by_annotator(project: Project) -> list[dict[str, Any]]:
    """Per annotator: work by status, quality-control results, pause state and an at-risk flag."""
    from .quality import consistency_scores, qc_settings

    qc = qc_settings(project)
    by_status = _status_counts(Assignment.objects.filter(project=project, purpose=Assignment.Purpose.REGULAR),
                               "rater_id")
    qc_rows = {
        r["rater_id"]: r for r in Assignment.objects.filter(project=project).values("rater_id").annotate(
            attention_answered=Count("id", filter=Q(purpose="attention", qc_passed__isnull=False)),
            attention_failed=Count("id", filter=Q(purpose="attention", qc_passed=False)),
            gold_answered=Count("id", filter=Q(purpose="gold", qc_passed__isnull=False)),
            gold_correct=Count("id", filter=Q(purpose="gold", qc_passed=True)),
        ).order_by()
    }
    consistency = consistency_scores(project)
    members = (
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR)
        .select_related("user__rater").order_by("user__username")
    )
    rows = []
    for m in members:
        rater = getattr(m.user, "rater", None)
        rid = rater.id if rater else None
        counts = by_status.get(rid, dict.fromkeys(STATUS_KEYS, 0))
        q = qc_rows.get(rid, {})
        gold_answered = q.get("gold_answered", 0)
        accuracy = q.get("gold_correct", 0) / gold_answered if gold_answered else None
        cons = consistency.get(rid, {})
        risks = []
        if m.paused_at:
            risks.append(f"paused: {m.paused_reason or 'by a researcher'}")
        if q.get("attention_failed"):
            risks.append(f"{q['attention_failed']} attention check(s) failed")
        if accuracy is not None and gold_answered >= qc["gold_min_answered"] and accuracy < qc["gold_threshold"]:
            risks.append(f"gold accuracy {accuracy:.0%}")
        if cons and cons["consistency"] < 0.5:
            risks.append(f"consistency {cons['consistency']:.0%}")
        attrs = {k: v for k, v in ((rater.attributes if rater else {}) or {}).items() if k != "crowd"}
        rows.append({
            "rater_id": rid, "name": rater.name if rater else m.user.get_username(), "attributes": attrs,
            **counts, "attention_answered": q.get("attention_answered", 0),
            "attention_failed": q.get("attention_failed", 0), "gold_answered": gold_answered,
            "gold_accuracy": accuracy, "repeats": cons.get("repeats", 0), "consistency": cons.get("consistency"),
            "paused": bool(m.paused_at), "at_risk": "; ".join(risks),
        })
    return rows


def throughput(project: Project, *, hours: int = 48) -> list[dict[str, Any]]:
    """Submissions per hour over the last ``hours`` hours."""
    from datetime import timedelta

    from django.db.models.functions import TruncHour
    from django.utils import timezone

    since = timezone.now() - timedelta(hours=hours)
    rows = (
        Assignment.objects.filter(project=project, status=Assignment.Status.SUBMITTED, submitted_at__gte=since)
        .annotate(hour=TruncHour("submitted_at")).values("hour").annotate(n=Count("id")).order_by("hour")
    )
    return [{"hour": r["hour"], "submitted": r["n"]} for r in rows]
