"""Projects and who works on them: creating a project from a preset (its rubric stored as an
immutable version), members and their roles, and opening or closing a project."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils.translation import gettext as _

from benchmarks.registry import get_preset
from core.errors import DomainError

from .assigning import assign_all_annotators, uses_default_assignment
from .models import Assignment, Membership, Project, Rater, RubricVersion
from .rubric import Rubric

#: how a project hands items out (``Project.options["assignment"]``): ``default``, every annotator
#: gets items until each item has k; ``plans``, only the study design's plans do (``studies.plans``)
ASSIGNMENT_MODES = ("default", "plans")

#: the automatic rows nobody has opened yet, outside any plan: what a plan taking the project over,
#: or switching it to plans, removes (they are made again by switching back)
UNOPENED_DEFAULT_ROWS = Q(
    plan__isnull=True,
    status=Assignment.Status.ASSIGNED,
    opened_at__isnull=True,
    purpose=Assignment.Purpose.REGULAR,
)


def rubric_version_for(*, rubric_key: str, schema: dict[str, Any]) -> RubricVersion:
    """The stored version of this exact schema, creating the next version number if it changed."""
    Rubric.from_schema(schema)  # refuse malformed schemas before storing them
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    with transaction.atomic():
        existing = RubricVersion.objects.filter(rubric_key=rubric_key, schema_hash=digest).first()
        if existing:
            return existing
        last = RubricVersion.objects.filter(rubric_key=rubric_key).aggregate(m=Max("version"))["m"] or 0
        return RubricVersion.objects.create(rubric_key=rubric_key, version=last + 1, schema=schema, schema_hash=digest)


def create_project(
    *,
    name: str,
    preset_key: str,
    created_by: AbstractBaseUser | None,
    k_per_item: int | None = None,
    show_model_hints: bool | None = None,
    assignment: str = "default",
) -> Project:
    """A project from a preset. ``assignment`` ``plans`` starts it on its study design: nothing is
    assigned (to members added or items imported) until a plan assigns a sample."""
    if assignment not in ASSIGNMENT_MODES:
        raise DomainError(_("unknown assignment %(mode)r: use default or plans") % {"mode": assignment})
    try:
        preset = get_preset(preset_key)
    except KeyError:
        raise DomainError(f"unknown preset {preset_key!r}") from None
    name = (name or "").strip()
    if not name:
        raise DomainError("a project needs a name")
    k = k_per_item if k_per_item is not None else int(preset.defaults.get("k", 3))
    if not 1 <= k <= 100:
        raise DomainError("k (annotators per item) must be between 1 and 100")
    with transaction.atomic():
        project = Project.objects.create(
            name=name[:200],
            preset_key=preset.key,
            rubric_version=rubric_version_for(rubric_key=preset.key, schema=preset.rubric),
            k_per_item=k,
            show_model_hints=bool(
                show_model_hints if show_model_hints is not None else preset.defaults.get("show_model_hints", False)
            ),
            randomise_pair_order=bool(preset.defaults.get("randomise_pair_order", True)),
            options={"assignment": "plans"} if assignment == "plans" else {},
            created_by=created_by,
        )
        if created_by is not None:
            Membership.objects.create(project=project, user=created_by, role=Membership.Role.RESEARCHER)
    return project


def rater_for_user(user: AbstractBaseUser) -> Rater:
    rater = Rater.objects.filter(user=user).first()
    if rater is None:
        try:
            with transaction.atomic():
                rater = Rater.objects.create(kind=Rater.Kind.HUMAN, user=user, name=user.get_username())
        except IntegrityError:
            rater = Rater.objects.get(user=user)
    return rater


def assigns_new_members(project: Project) -> bool:
    """Whether a new annotator gets items now (the default strategy). Not once the study design
    has begun: plans have taken the project over, or a sample has been drawn, which is what a
    plan will assign (issue 14: adding annotators before the design handed them every item)."""
    return uses_default_assignment(project) and not project.samples.exists()


def add_member(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    """Make ``user`` a member. A new annotator gets a profile (a human rater) and, while the
    project uses the default strategy and has no sample (:func:`assigns_new_members`), items
    until each has k annotators; otherwise the plans hand items out."""
    if role not in Membership.Role.values:
        raise DomainError(f"unknown role {role!r}")
    with transaction.atomic():
        membership, _ = Membership.objects.get_or_create(project=project, user=user, role=role)
        if role == Membership.Role.ANNOTATOR:
            rater_for_user(user)
            if assigns_new_members(project):
                assign_all_annotators(project=project)
    return membership


def set_assignment_mode(*, project: Project, mode: str) -> int:
    """Switch how the project hands items out. To ``plans``: the unopened automatic rows are
    removed (returns how many); to ``default``: every annotator gets items until each item has k
    (returns how many were made). Opened and submitted work is never touched."""
    if mode not in ASSIGNMENT_MODES:
        raise DomainError(_("unknown assignment %(mode)r: use default or plans") % {"mode": mode})
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)  # options: read, change, write
        options = dict(locked.options)
        options["assignment"] = mode
        Project.objects.filter(pk=project.pk).update(options=options)
        project.options = options
        if mode == "plans":
            changed, _per_model = Assignment.objects.filter(UNOPENED_DEFAULT_ROWS, project=project).delete()
        else:
            changed = assign_all_annotators(project=project)
    return changed


def set_project_status(*, project: Project, status: str) -> Project:
    if status not in Project.Status.values:
        raise DomainError(f"unknown status {status!r}")
    project.status = status
    project.save(update_fields=["status"])
    return project
