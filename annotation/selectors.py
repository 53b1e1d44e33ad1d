"""The reads of the human side, tuned once here."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from . import hotpath
from .models import (
    ANNOTATOR_KIND,
    QUEUE_ORDER,
    QUEUE_STATUSES,
    Annotation,
    Asset,
    Assignment,
    Item,
    Membership,
    Project,
    Rater,
)

OPEN_STATUSES = QUEUE_STATUSES


def can_create_projects(user: AbstractBaseUser) -> bool:
    return bool(user.is_authenticated and (user.is_superuser or user.has_perm("annotation.add_project")))


def uses_the_api(user: AbstractBaseUser) -> bool:
    """Whether the page header offers the API and its tokens (issue 35): to researchers, staff
    and whoever may create projects, not to someone who only annotates (their work is the
    annotate page, and two links they never need crowd a phone's header)."""
    if not user.is_authenticated:
        return False
    if user.is_superuser or user.is_staff or can_create_projects(user):
        return True
    return Membership.objects.filter(user=user, role=Membership.Role.RESEARCHER).exists()


def managed_projects(user: AbstractBaseUser) -> QuerySet[Project]:
    """Projects a user may administer: superusers all, researchers those they belong to."""
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user, memberships__role=Membership.Role.RESEARCHER).distinct()


def visible_projects(user: AbstractBaseUser) -> QuerySet[Project]:
    """The projects a user manages or annotates: the API lists these, and any other is a 404."""
    managed = managed_projects(user).values("pk")
    annotated = annotator_projects(user).values("pk")
    return Project.objects.filter(Q(pk__in=managed) | Q(pk__in=annotated))


def can_manage(user: AbstractBaseUser, project: Project) -> bool:
    return bool(user.is_authenticated) and managed_projects(user).filter(pk=project.pk).exists()


def annotator_projects(user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(memberships__user=user, memberships__role=Membership.Role.ANNOTATOR).distinct()


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
        .filter(pk=assignment_id, rater__user=user, rater__kind=ANNOTATOR_KIND)
        .first()
    )


def queue_progress(rater: Rater, project: Project) -> dict[str, int]:
    counts = hotpath.queue_counts(rater.pk, project.pk)  # one prepared statement: every page of the loop shows it
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
    qs = (
        Assignment.objects.filter(rater__user=user)
        .select_related("item", "project")
        .order_by("project_id", *QUEUE_ORDER)
    )
    return qs.filter(project=project) if project is not None else qs


def project_progress(project: Project) -> dict[str, Any]:
    """The people's work: a judge is a rater too, but its outputs are neither assignments nor
    annotations here (issue 25)."""
    human = Assignment.objects.filter(project=project, rater__kind=Rater.Kind.HUMAN)
    by_status = dict(human.values_list("status").annotate(c=Count("id")))
    return {
        "items": Item.objects.filter(project=project).count(),
        "assignments": sum(by_status.values()),
        "by_status": by_status,
        "annotations": Annotation.objects.filter(item__project=project, rater__kind=Rater.Kind.HUMAN).count(),
    }


def per_annotator_progress(project: Project) -> list[dict[str, Any]]:
    """Each human annotator's assigned, done and skipped items (judges are not annotators)."""
    rows = (
        Assignment.objects.filter(project=project, rater__kind=Rater.Kind.HUMAN)
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
    return (
        Item.objects.filter(assets=asset)
        .filter(
            Q(project__memberships__user=user, project__memberships__role=Membership.Role.RESEARCHER)
            | Q(assignments__rater__user=user)
        )
        .exists()
    )
