"""Prolific entry: ``/p/<study token>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..`` creates or
resumes a pseudonymous annotator, asks the optional pre-screen, hands over to the normal
annotating pages, and ends on the completion page with the study's code.

Prolific can only send participants with a GET, so entering a study (and completing it) are
GETs that write; both are idempotent for a participant: the same link resumes the same one.
A browser already logged in as someone else (a researcher trying the link, another
participant) is not switched on a GET: a confirmation page asks, and its POST switches."""

from __future__ import annotations

from django.contrib.auth import login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from core.errors import DomainError
from studies.models import CrowdParticipant, CrowdStudy

from . import crowd, selectors
from .next_item import next_assignment

SESSION_KEY = "hv_crowd_participant"


def participant_in_session(request: HttpRequest, study: CrowdStudy) -> CrowdParticipant | None:
    return selectors.session_participant(request.session.get(SESSION_KEY), study, request.user)


PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def needs_switch_confirmation(request: HttpRequest, study: CrowdStudy, prolific_pid: str) -> bool:
    """Whether a different user is logged in than the participant this Prolific id is."""
    if not request.user.is_authenticated:
        return False
    existing = selectors.participant_by_prolific_id(study, prolific_pid)
    return existing is None or existing.rater.user_id != request.user.pk


@never_cache
def entry(request: HttpRequest, token: str) -> HttpResponse:
    study = selectors.study_or_404(token)
    participant = participant_in_session(request, study)
    switching = request.method == "POST" and request.POST.get("hv_switch") == "1"
    params = request.POST if switching else request.GET
    if (request.method == "GET" or switching) and params.get("PROLIFIC_PID"):
        pid = params.get("PROLIFIC_PID", "")
        if not switching and needs_switch_confirmation(request, study, pid):
            return render(
                request,
                "studies/crowd_switch.html",
                {"study": study, "params": {k: params.get(k, "") for k in PROLIFIC_PARAMS}},
            )
        try:
            participant = crowd.enter_study(
                study=study,
                prolific_pid=pid,
                study_id=params.get("STUDY_ID", ""),
                session_id=params.get("SESSION_ID", ""),
            )
        except DomainError as exc:
            return render(request, "studies/crowd_message.html", {"study": study, "message": exc.message}, status=400)
        login(request, participant.rater.user, backend="django.contrib.auth.backends.ModelBackend")
        request.session[SESSION_KEY] = participant.pk
        if switching:
            return redirect("crowd_entry", token=study.token)
    if participant is None:
        message = (
            _("This study is not taking participants.")
            if not study.active
            else _("Open this study from Prolific: the link lacks your Prolific id.")
        )
        return render(request, "studies/crowd_message.html", {"study": study, "message": message}, status=400)
    errors = {}
    if request.method == "POST":
        try:
            participant = crowd.answer_prescreen(participant=participant, answers=request.POST)
        except DomainError as exc:
            errors = exc.errors if isinstance(exc.errors, dict) else {}
    if participant.eligible is None:
        return render(
            request,
            "studies/crowd_prescreen.html",
            {
                "study": study,
                "errors": errors,
                "answers": request.POST if request.method == "POST" else {},
            },
            status=400 if errors else 200,
        )
    if participant.eligible is False:
        return render(
            request,
            "studies/crowd_message.html",
            {
                "study": study,
                "message": _(
                    "Thank you. This study needs participants with a different profile, so "
                    "there is no work for you here. Please return the study on Prolific."
                ),
            },
        )
    return redirect("crowd_work", token=study.token)


@never_cache
def work(request: HttpRequest, token: str) -> HttpResponse:
    study = selectors.study_or_404(token)
    participant = participant_in_session(request, study)
    if participant is None or not participant.eligible:
        return redirect("crowd_entry", token=study.token)
    nxt = next_assignment(rater=participant.rater, project=study.project)
    if nxt is None:
        return redirect("crowd_done", token=study.token)
    return redirect("annotate", assignment_id=nxt.id)


@never_cache
def done(request: HttpRequest, token: str) -> HttpResponse:
    study = selectors.study_or_404(token)
    participant = participant_in_session(request, study)
    if participant is None:
        raise Http404("no such participant")
    rater = participant.rater
    submitted = crowd.submitted_count(rater, study.project)
    finished = submitted >= study.items_per_participant
    if not finished and next_assignment(rater=rater, project=study.project) is not None:
        return redirect("crowd_work", token=study.token)
    # Done: either the quota is reached or no work is left for them (both complete the study).
    crowd.complete(participant=participant)
    return render(
        request,
        "studies/crowd_done.html",
        {
            "study": study,
            "submitted": submitted,
            "code": study.completion_code,
            "complete_url": crowd.completion_url(study),
            "quota_reached": finished,
        },
    )
