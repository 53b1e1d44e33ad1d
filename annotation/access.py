"""Access to a project, for every page and API view of every app.

Researchers and admins manage a project (superusers every project); annotators work in the
projects they are members of. A project someone may not see at all is a 404 whether or not it
exists (an outsider learns nothing from the answer), one they may see but not manage (an
annotator in it) is a 403. Both helpers raise Django's own exceptions, which pages show as
error pages and DRF turns into 403 / 404 answers, so one helper serves both."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404

from .models import Project
from .selectors import annotator_projects, can_manage, visible_projects

#: the largest id a bigint primary key can hold; anything larger names nothing
MAX_ID = 2**63 - 1


def as_id(value: Any) -> int:
    """A URL or query value as a primary key, or a 404: ``false``, ``null,null`` and ids too
    large for the database name no row, they are not server errors. Only ASCII digits: ``"²"``
    is a digit to :meth:`str.isdigit` but not to :func:`int` (a server error, issue 37)."""
    text = str(value)
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_ID:
        raise Http404("no such object")
    return int(text)


def managed_project_or_403(user: AbstractBaseUser, project_id: Any, *, hide: bool = False) -> Project:
    """The project, if ``user`` may manage it: a 404 when it does not exist or ``user`` is not
    in it (the same answer, so outsiders cannot probe ids), a 403 for an annotator of the
    project; with ``hide`` (API endpoints that never confirm a project exists) a 404 for all."""
    project = Project.objects.select_related("rubric_version").filter(pk=as_id(project_id)).first()
    if project is None:
        raise Http404("no such project")
    if not can_manage(user, project):
        if hide or not annotator_projects(user).filter(pk=project.pk).exists():
            raise Http404("no such project")
        raise PermissionDenied("only the project's researchers and admins can do this")
    return project


def annotator_project_or_404(user: AbstractBaseUser, project_id: Any) -> Project:
    """The project, if ``user`` annotates in it; anyone else gets a 404 (never a hint it exists)."""
    project = annotator_projects(user).filter(pk=as_id(project_id)).first()
    if project is None:
        raise Http404("no such project in your queue")
    return project


def managed_visible_project(user: AbstractBaseUser, project_id: object) -> Project:
    """A project for the API's researcher routes: a 404 for one the caller cannot see at all
    (it is not among the projects they manage or annotate), a 403 for one they only annotate."""
    project = get_object_or_404(visible_projects(user), pk=as_id(project_id))
    return managed_project_or_403(user, project.pk)
