"""The annotator's pages: my queues, a project's queue, the next item, the annotate page (GET
opens an item, POST stores the answer and goes on to the next) and skipping. Thin: parse, call
one service or selector, render.

Two GETs write on purpose, because the act is looking: opening an item marks it in progress
(and renews a pooled hold), and asking for the next item may claim one from a pool or inject
a quality-control item (``studies.next_item``)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation import hotpath, projects, selectors
from annotation.access import annotator_project_or_404, as_id
from annotation.models import Assignment
from annotation.presentation import item_render_context, question_blocks, rubric_wording, stimulus_blocks
from core.errors import DomainError
from core.security import VerifiedSession, forget_session, verified_session
from studies.crowd import participant_for as crowd_participant_for
from studies.next_item import next_after_submit, next_assignment, why_nothing

from . import annotating

QUEUE_PAGE = 50


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "annotation/home.html",
        {
            "queues": selectors.my_queues(request.user),
            "projects": selectors.managed_projects(request.user).order_by("-created_at"),
            "can_create": selectors.can_create_projects(request.user),
        },
    )


@login_required
def queue(request: HttpRequest, project_id: int) -> HttpResponse:
    project = annotator_project_or_404(request.user, project_id)
    rater = projects.rater_for_user(request.user)
    # a queue of thousands of items is one page of QUEUE_PAGE rows at a time, not one long table
    page = Paginator(selectors.my_assignments(request.user, project), QUEUE_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "annotation/queue.html",
        {
            "project": project,
            "progress": selectors.queue_progress(rater, project),
            "assignments": page,
        },
    )


@login_required
def next_item(request: HttpRequest, project_id: int) -> HttpResponse:
    project = annotator_project_or_404(request.user, project_id)
    rater = projects.rater_for_user(request.user)
    nxt = next_assignment(rater=rater, project=project)
    if nxt is None:
        why, paused = why_nothing(rater, project)
        if why == "quota":
            participant = crowd_participant_for(rater, project)
            return redirect("crowd_done", token=participant.study.token)
        return render(
            request,
            "annotation/done.html",
            {
                "project": project,
                "progress": selectors.queue_progress(rater, project),
                "paused": paused,
            },
        )
    return redirect("annotate", assignment_id=nxt.id)


def annotate(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """An item's page (GET opens it) and its form (POST stores the answer, then on to the next).
    A plain logged-in session takes the lean path (``annotation.hotpath``, issue 15): the
    session's user is checked in the one statement that reads (or, to store, locks) the
    assignment, instead of a query for the user and another for the assignment. Anything else
    (not logged in, not theirs, another way of logging in) goes the ordinary way."""
    assignment_id = as_id(assignment_id)
    session = verified_session(request) if settings.HV_LEAN_API else None
    if session is None:
        return _annotate_checked(request, assignment_id)
    if request.method == "POST":
        return _annotate_post_lean(request, assignment_id, session)
    loaded = hotpath.load_mine(session=session, assignment_id=assignment_id, kind="open", with_user=True)
    if loaded is None:
        forget_session(session)
        return _annotate_checked(request, assignment_id)
    request.user = loaded.user  # the session's user, as AuthenticationMiddleware gives it
    return _annotate_page(request, loaded.assignment, stored_answers=loaded.answers)


@login_required
def _annotate_checked(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """The ordinary way: the user from the session, then the assignment if it is theirs."""
    assignment = selectors.my_assignment(request.user, assignment_id)
    if assignment is None:
        raise Http404("no such assignment in your queue")
    return _annotate_page(request, assignment)


def _form_duration(request: HttpRequest) -> int | None:
    try:
        return int(request.POST.get("duration_ms") or 0) or None
    except ValueError:
        return None


def _annotate_post_lean(request: HttpRequest, assignment_id: int, session: VerifiedSession) -> HttpResponse:
    """The form of a plain logged-in session: locked, checked, stored and the next item found by
    ``annotating.submit_mine``; a refusal shows the page again with the answers and errors."""
    parsed: dict = {}

    def read_form(assignment: Assignment) -> dict:
        parsed["answers"] = assignment.project.rubric_version.parsed().parse_form(
            request.POST, item=item_render_context(assignment.item)
        )
        return parsed["answers"]

    done = annotating.submit_mine(
        session=session,
        assignment_id=assignment_id,
        answers=read_form,
        duration_ms=_form_duration(request),
        edit=request.POST.get("mode") == "edit",
        with_user=True,
        locale=request.POST.get("locale", ""),  # the wording the form was rendered in
    )
    if done.loaded is None:
        forget_session(session)
        return _annotate_checked(request, assignment_id)
    request.user = done.loaded.user
    assignment = done.loaded.assignment
    if done.error is None:
        if request.POST.get("mode") == "edit":
            messages.success(request, _("Your changes are saved."))
        if done.next_id is None:
            return redirect("next_item", project_id=assignment.project_id)
        return redirect("annotate", assignment_id=done.next_id)
    exc = done.error
    messages.error(request, exc.message)
    return _annotate_page(
        request,
        assignment,
        answers=parsed.get("answers"),
        errors=exc.errors if isinstance(exc.errors, dict) else {},
        status=400,
        stored_answers=done.loaded.answers,
    )


def _annotate_page(
    request: HttpRequest,
    assignment: Assignment,
    *,
    answers: dict | None = None,
    errors: dict | None = None,
    status: int = 200,
    stored_answers: dict | None = None,
) -> HttpResponse:
    """The ordinary path's GET and POST, and the page of a lean GET or of a refused lean POST
    (``answers``/``errors``/``status`` given). ``stored_answers``: the submitted answer already read."""
    project = assignment.project
    rubric = project.rubric_version.parsed()
    wording = rubric_wording(request, rubric)
    item_ctx = item_render_context(assignment.item)
    rater = assignment.rater
    submitted = assignment.status == Assignment.Status.SUBMITTED
    if request.method == "POST" and status == 200:
        answers = rubric.parse_form(request.POST, item=item_ctx)
        try:
            annotating.submit_annotation(
                assignment_id=assignment.id,
                rater=rater,
                answers=answers,
                duration_ms=_form_duration(request),
                edit=request.POST.get("mode") == "edit",
                loaded=assignment,
                locale=request.POST.get("locale", ""),  # the wording the form was rendered in
            )
        except DomainError as exc:
            errors = exc.errors if isinstance(exc.errors, dict) else {}
            messages.error(request, exc.message)
            status = 400
        else:
            if request.POST.get("mode") == "edit":
                messages.success(request, _("Your changes are saved."))
            nxt = next_after_submit(rater=rater, project=project, queue_next=False)
            if nxt is None:
                return redirect("next_item", project_id=project.id)
            return redirect("annotate", assignment_id=nxt)
    elif request.method != "POST":
        if assignment.status == Assignment.Status.EXPIRED:
            messages.error(
                request, _("Your hold on that item ran out and it went to someone else; here is the next one.")
            )
            return redirect("next_item", project_id=project.id)
        # (a lean GET opened it already: this only renews a pooled hold)
        annotating.open_assignment(assignment=assignment, rater=rater)
        if submitted:
            answers = stored_answers if stored_answers is not None else assignment.annotation.answers
    progress = selectors.queue_progress(rater, project)
    return render(
        request,
        "annotation/annotate.html",
        {
            "assignment": assignment,
            "project": project,
            "rubric": wording["rubric"],
            "wording": wording,
            "stimulus": stimulus_blocks(
                project=project, rubric=wording["rubric"], item_ctx=item_ctx, presentation=assignment.presentation
            ),
            "questions": question_blocks(rubric=wording["rubric"], item_ctx=item_ctx, answers=answers, errors=errors),
            "mode": "edit" if submitted else "submit",
            "editable": project.is_open,
            "progress": progress,
            "position": progress["done"] + (0 if submitted else 1),
        },
        status=status,
    )


@login_required
@require_POST
def skip(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.my_assignment(request.user, as_id(assignment_id))
    if assignment is None:
        raise Http404("no such assignment in your queue")
    try:
        annotating.skip_assignment(
            assignment_id=assignment.id, rater=assignment.rater, reason=request.POST.get("reason", "")
        )
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("annotate", assignment_id=assignment.id)
    return redirect("next_item", project_id=assignment.project_id)
