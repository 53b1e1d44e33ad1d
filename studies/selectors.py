"""The reads behind the study-design pages (``views``, ``plan_views``, ``crowd_views``): a project's
samples, plans and studies, one of them by id (404 outside the project), the items and
assignments a page lists, the keys an item or a profile offers the forms, and the Prolific
participant a browser session belongs to. Nothing here writes, except :func:`user_rater`,
which gives a user their Rater row on first use as ``annotation.projects.rater_for_user`` does.

The dashboard's own aggregates stay in ``dashboard``; the plan service's reads of the
annotators' profiles in ``plans``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.access import as_id
from annotation.models import Assignment, Item, Project, Rater
from annotation.projects import rater_for_user
from benchmarks.base import STRATA_KEYS, StudyDesign
from core.errors import DomainError

from . import crowd, dashboard, plans
from .models import AssignmentPlan, CrowdParticipant, CrowdStudy, Sample, SampleItem

#: how many samples and plans the design page lists (in the models' default order)
DESIGN_PAGE_ROWS = 50
#: how many rows a sample's or a plan's page lists (its items, its assignments)
DETAIL_ROWS = 500


# --------------------------------------------------------------------------- the design page
def study_design(project: Project) -> StudyDesign | None:
    """The preset's study design (the paper's), offered as initial form values, never applied."""
    return project.preset.study_design


def meta_keys(project: Project) -> list[str]:
    """Keys of the items' meta a sample can be stratified by (from the first 50 items), without
    the expected answers and the QC markers."""
    first = Item.objects.filter(project=project).order_by("id").values_list("meta", flat=True)[:50]
    return sorted({k for m in first for k in (m or {}) if not k.startswith("expected.") and k != "qc"})


def recent_samples(project: Project) -> QuerySet[Sample]:
    return project.samples.all()[:DESIGN_PAGE_ROWS]


def recent_plans(project: Project) -> QuerySet[AssignmentPlan]:
    return project.plans.select_related("sample")[:DESIGN_PAGE_ROWS]


# --------------------------------------------------------------------------- a sample and its plan form
def sample_or_404(project: Project, sample_id: int) -> Sample:
    return get_object_or_404(Sample, pk=as_id(sample_id), project=project)


def sample_members(sample: Sample) -> QuerySet[SampleItem]:
    """The sample's items as its page lists them: by stratum, then external id."""
    return sample.members.select_related("item").order_by("stratum", "item__external_id")[:DETAIL_ROWS]


def item_keys(project: Project, meta_keys: list[str]) -> list[str]:
    """Item keys an eligibility rule can compare with: the strata columns that hold a value in
    this project, then the items' meta keys."""
    used = [key for key in STRATA_KEYS if Item.objects.filter(project=project).exclude(**{key: ""}).exists()]
    return used + [k for k in meta_keys if k not in used]


def plan_form_facts(project: Project, meta_keys: list[str]) -> dict[str, Any]:
    """What the plan form template needs beyond the form and its quota rows: the profiles' keys
    and values (the datalists and the table beside the form), the item keys and how many
    annotators the project has."""
    return {
        "profile_values": plans.attribute_values(project),
        "item_keys": item_keys(project, meta_keys),
        "annotator_count": len(plans.project_annotators(project)),
    }


# --------------------------------------------------------------------------- a plan
def plan_or_404(project: Project, plan_id: int) -> AssignmentPlan:
    return get_object_or_404(AssignmentPlan.objects.select_related("sample"), pk=as_id(plan_id), project=project)


def plan_assignments(plan: AssignmentPlan) -> QuerySet[Assignment]:
    """The plan's assignments as its page lists them: by item, then annotator."""
    return (
        Assignment.objects.filter(plan=plan)
        .select_related("item", "rater")
        .order_by("item__external_id", "rater__name")[:DETAIL_ROWS]
    )


def latest_item(project: Project, external_id: str) -> Item:
    """The newest version of the project's item ``external_id``; DomainError if there is none."""
    item = Item.objects.filter(project=project, external_id=external_id.strip()).order_by("-version").first()
    if item is None:
        raise DomainError(f"no item {external_id!r} in this project", code="not_found")
    return item


def project_assignment(project: Project, assignment_id: int) -> Assignment:
    """One assignment of the project; DomainError if the id is another project's or none."""
    assignment = Assignment.objects.filter(pk=assignment_id, project=project).first()
    if assignment is None:
        raise DomainError("no such assignment in this project", code="not_found")
    return assignment


def user_rater(username: str) -> Rater:
    """The Rater of the user ``username`` (created on first use); DomainError if no such user."""
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise DomainError(f"no user named {username!r}", code="not_found")
    return rater_for_user(user)


# --------------------------------------------------------------------------- the dashboard
def rater_or_404(rater_id: int) -> Rater:
    return get_object_or_404(Rater, pk=as_id(rater_id))


def plans_with_progress(project: Project) -> list[tuple[AssignmentPlan, list[dict[str, Any]]]]:
    """Every plan of the project with its progress per stratum (``dashboard.progress_by_stratum``)."""
    return [(p, dashboard.progress_by_stratum(p)) for p in project.plans.select_related("sample")]


def project_studies(project: Project) -> QuerySet[CrowdStudy]:
    return project.studies.all()


def study_of_project_or_404(project: Project, study_id: int) -> CrowdStudy:
    return get_object_or_404(CrowdStudy, pk=as_id(study_id), project=project)


# --------------------------------------------------------------------------- Prolific entry
def study_or_404(token: str) -> CrowdStudy:
    """The study a Prolific link names by its token."""
    study = CrowdStudy.objects.select_related("project").filter(token=token).first()
    if study is None:
        raise Http404("no such study")
    return study


def session_participant(
    participant_id: int | None, study: CrowdStudy, user: AbstractBaseUser | AnonymousUser
) -> CrowdParticipant | None:
    """The participant a browser session names, if it is this study's and the logged-in user's."""
    if not participant_id or not user.is_authenticated:
        return None
    return (
        CrowdParticipant.objects.select_related("rater__user", "study")
        .filter(pk=participant_id, study=study, rater__user=user)
        .first()
    )


def participant_by_prolific_id(study: CrowdStudy, prolific_pid: str) -> CrowdParticipant | None:
    """The study's participant with this Prolific id (stored hashed), if they have entered."""
    return CrowdParticipant.objects.filter(study=study, pid_hash=crowd.pid_hash(prolific_pid)).first()
