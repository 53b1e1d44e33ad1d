"""Crowd entry from Prolific: a secret study link creates or resumes a pseudonymous annotator.

Nothing personal is stored: the PROLIFIC_PID only as a keyed hash (HMAC-SHA256 with
``HV_CROWD_PID_KEY``; while that is empty, the SECRET_KEY, as older deployments hashed, and
``check --deploy`` warns: studies.W001), the user name is derived from that hash, the
password is unusable. Pre-screen answers (e.g. nationality) become rater attributes and are
checked against the project's active assignment plans. After ``items_per_participant``
submitted items (or when no work is left for them) the completion page shows the study's
completion code and the Prolific return link.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Assignment, Membership, Project, Rater
from annotation.projects import add_member
from core.errors import DomainError
from studies.models import AssignmentPlan, CrowdParticipant, CrowdStudy

from .rules import rater_requirement_keys

PROLIFIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"


def pid_hash(pid: str) -> str:
    key = (getattr(settings, "HV_CROWD_PID_KEY", "") or settings.SECRET_KEY).encode()
    return hmac.new(key, pid.encode(), hashlib.sha256).hexdigest()


def completion_url(study: CrowdStudy) -> str:
    return COMPLETE_URL.format(code=study.completion_code)


def create_study(
    *,
    project: Project,
    name: str,
    completion_code: str,
    items_per_participant: int = 10,
    prescreen: list[dict[str, Any]] | None = None,
) -> CrowdStudy:
    code = (completion_code or "").strip()
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", code):
        raise DomainError("the completion code must be 1-64 letters, digits, - or _ (as Prolific shows it)")
    if not 1 <= int(items_per_participant) <= 10_000:
        raise DomainError("items per participant must be between 1 and 10000")
    clean = []
    for q in prescreen or []:
        attr = (q.get("attribute") or "").strip()
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,49}", attr):
            raise DomainError(f"invalid pre-screen attribute {attr!r}")
        choices = [str(c).strip() for c in q.get("choices") or [] if str(c).strip()]
        clean.append({"attribute": attr, "label": (q.get("label") or attr).strip()[:200], "choices": choices})
    return CrowdStudy.objects.create(
        project=project,
        name=(name or "Prolific study").strip()[:200],
        token=secrets.token_urlsafe(24),
        completion_code=code,
        items_per_participant=int(items_per_participant),
        prescreen=clean,
    )


def enter_study(*, study: CrowdStudy, prolific_pid: str, study_id: str = "", session_id: str = "") -> CrowdParticipant:
    """Create the participant on first entry, resume them after."""
    if not study.active or not study.project.is_open:
        raise DomainError(_("this study is not taking participants"))
    for label, value in (("PROLIFIC_PID", prolific_pid), ("STUDY_ID", study_id), ("SESSION_ID", session_id)):
        if value and not PROLIFIC_ID.match(value):
            raise DomainError(_("%(name)s is not a valid Prolific id") % {"name": label})
    if not prolific_pid:
        raise DomainError(_("the link lacks PROLIFIC_PID: open the study from Prolific"))
    digest = pid_hash(prolific_pid)
    found = CrowdParticipant.objects.filter(study=study, pid_hash=digest).select_related("rater__user").first()
    if found is not None:
        if session_id and found.prolific_session_id != session_id:
            found.prolific_session_id = session_id
            found.save(update_fields=["prolific_session_id"])
        return found
    User = get_user_model()
    try:
        with transaction.atomic():
            username = f"p-{digest[:20]}"
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User(username=username)
                user.set_unusable_password()
                user.save()
            rater = Rater.objects.filter(user=user).first() or Rater.objects.create(
                kind=Rater.Kind.HUMAN, user=user, name=username, attributes={"crowd": True}
            )
            participant = CrowdParticipant.objects.create(
                study=study,
                pid_hash=digest,
                rater=rater,
                prolific_study_id=study_id,
                prolific_session_id=session_id,
                eligible=None if study.prescreen else True,
            )
            if not study.prescreen:
                add_member(project=study.project, user=user, role=Membership.Role.ANNOTATOR)
    except IntegrityError:  # the same participant opened the link twice at once
        return CrowdParticipant.objects.select_related("rater__user").get(study=study, pid_hash=digest)
    return participant


def eligible_for_project(rater: Rater, project: Project) -> bool:
    """Whether any active plan has places this annotator's attributes can fill (True without plans)."""

    plans = list(AssignmentPlan.objects.filter(project=project, status=AssignmentPlan.Status.ACTIVE))
    if not plans:
        return True
    return any(set(rater_requirement_keys(rater, p)) & set(p.report.get("requires", [""])) for p in plans)


def answer_prescreen(*, participant: CrowdParticipant, answers: dict[str, str]) -> CrowdParticipant:
    study = participant.study
    errors = {}
    clean: dict[str, str] = {}
    for q in study.prescreen:
        value = (answers.get(q["attribute"]) or "").strip()
        if not value:
            errors[q["attribute"]] = _("please answer")
        elif q["choices"] and value not in q["choices"]:
            errors[q["attribute"]] = _("choose one of the options")
        else:
            clean[q["attribute"]] = value[:100]
    if errors:
        raise DomainError(_("please answer the pre-screen questions"), errors=errors)
    with transaction.atomic():
        rater = participant.rater
        rater.attributes = {**rater.attributes, **clean, "crowd": True}
        rater.save(update_fields=["attributes"])
        participant.prescreen_answers = clean
        participant.eligible = eligible_for_project(rater, study.project)
        participant.save(update_fields=["prescreen_answers", "eligible"])
        if participant.eligible:
            add_member(project=study.project, user=rater.user, role=Membership.Role.ANNOTATOR)
    return participant


def submitted_count(rater: Rater, project: Project) -> int:
    return Assignment.objects.filter(
        rater=rater, project=project, purpose=Assignment.Purpose.REGULAR, status=Assignment.Status.SUBMITTED
    ).count()


def participant_for(rater: Rater, project: Project) -> CrowdParticipant | None:
    return (
        CrowdParticipant.objects.filter(rater=rater, study__project=project)
        .select_related("study")
        .order_by("-created_at")
        .first()
    )


def quota_reached(*, rater: Rater, project: Project) -> bool:
    participant = participant_for(rater, project)
    if participant is None:
        return False
    return submitted_count(rater, project) >= participant.study.items_per_participant


def complete(*, participant: CrowdParticipant) -> CrowdParticipant:
    if participant.completed_at is None:
        participant.completed_at = timezone.now()
        participant.save(update_fields=["completed_at"])
    return participant


def set_study_active(*, study: CrowdStudy, active: bool) -> CrowdStudy:
    """Open a study to new participants or close it (those already in keep their place)."""
    study.active = active
    study.save(update_fields=["active"])
    return study
