"""Projects and who works on them: creating a project from a preset (its rubric stored as an
immutable version), members and their roles, and opening or closing a project."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Max

from benchmarks.registry import get_preset
from core.errors import DomainError

from .assigning import assign_all_annotators, uses_default_assignment
from .models import Membership, Project, Rater, RubricVersion
from .rubric import Rubric


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
) -> Project:
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


def add_member(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise DomainError(f"unknown role {role!r}")
    with transaction.atomic():
        membership, _ = Membership.objects.get_or_create(project=project, user=user, role=role)
        if role == Membership.Role.ANNOTATOR:
            rater_for_user(user)
            if uses_default_assignment(project):
                assign_all_annotators(project=project)
    return membership


def set_project_status(*, project: Project, status: str) -> Project:
    if status not in Project.Status.values:
        raise DomainError(f"unknown status {status!r}")
    project.status = status
    project.save(update_fields=["status"])
    return project
