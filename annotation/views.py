"""Server-rendered pages (htmx where a part refreshes). Thin: parse, call one service or
selector, render; domain refusals are shown through ``core.pages``.

Two GETs write on purpose, because the act is looking: opening an item marks it in progress
(and renews a pooled hold), and asking for the next item may claim one from a pool or inject
a quality-control item (``studies.next_item``)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from benchmarks.registry import PRESETS
from core import reaper
from core.errors import DomainError
from core.pages import form_error
from studies.crowd import participant_for as crowd_participant_for
from studies.next_item import next_assignment, why_nothing

from . import annotating, importing, projects, selectors
from .access import annotator_project_or_404, as_id, managed_project_or_403
from .assets import make_thumbnail, media_path, write_atomic
from .models import Asset, Assignment, ImportJob, Membership
from .presentation import item_render_context, question_blocks, stimulus_blocks


# ------------------------------------------------------------------------- annotator
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
    return render(
        request,
        "annotation/queue.html",
        {
            "project": project,
            "progress": selectors.queue_progress(rater, project),
            "assignments": selectors.my_assignments(request.user, project),
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


@login_required
def annotate(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = selectors.my_assignment(request.user, as_id(assignment_id))
    if assignment is None:
        raise Http404("no such assignment in your queue")
    project = assignment.project
    rubric = project.rubric_version.parsed()
    item_ctx = item_render_context(assignment.item)
    rater = assignment.rater
    answers, errors, status = None, None, 200
    submitted = assignment.status == Assignment.Status.SUBMITTED
    if request.method == "POST":
        answers = rubric.parse_form(request.POST, item=item_ctx)
        try:
            duration = int(request.POST.get("duration_ms") or 0) or None
        except ValueError:
            duration = None
        try:
            annotating.submit_annotation(
                assignment_id=assignment.id,
                rater=rater,
                answers=answers,
                duration_ms=duration,
                edit=request.POST.get("mode") == "edit",
                loaded=assignment,
            )
        except DomainError as exc:
            errors = exc.errors if isinstance(exc.errors, dict) else {}
            messages.error(request, exc.message)
            status = 400
        else:
            nxt = next_assignment(rater=rater, project=project)
            if nxt is None:
                return redirect("next_item", project_id=project.id)
            return redirect("annotate", assignment_id=nxt.id)
    else:
        if assignment.status == Assignment.Status.EXPIRED:
            messages.error(request, "Your hold on that item ran out and it went to someone else; here is the next one.")
            return redirect("next_item", project_id=project.id)
        annotating.open_assignment(assignment=assignment, rater=rater)
        if submitted:
            answers = assignment.annotation.answers
    progress = selectors.queue_progress(rater, project)
    return render(
        request,
        "annotation/annotate.html",
        {
            "assignment": assignment,
            "project": project,
            "rubric": rubric,
            "stimulus": stimulus_blocks(
                project=project, rubric=rubric, item_ctx=item_ctx, presentation=assignment.presentation
            ),
            "questions": question_blocks(rubric=rubric, item_ctx=item_ctx, answers=answers, errors=errors),
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


@login_required
def asset(request: HttpRequest, sha256: str, thumb: bool = False) -> FileResponse:
    found = Asset.objects.filter(sha256=sha256).first()
    if found is None or not selectors.user_may_view_asset(request.user, found):
        raise Http404("no such image")
    original = media_path(found.relative_path())
    path = media_path(found.thumbnail_path()) if thumb else original
    if thumb and not path.is_file() and original.is_file():
        # Thumbnails are made on first request, which keeps imports fast.
        write_atomic(path, make_thumbnail(original.read_bytes()))
    if not path.is_file():
        raise Http404("image file missing")
    response = FileResponse(
        path.open("rb"),  # FileResponse closes the file once sent
        content_type="image/webp" if thumb else f"image/{found.extension}",
    )
    response["Cache-Control"] = "private, max-age=86400, immutable"
    response["X-Content-Type-Options"] = "nosniff"
    return response


# ------------------------------------------------------------------------- researcher / admin
class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    preset = forms.ChoiceField(choices=[(k, f"{p.name} ({k})") for k, p in PRESETS.items()])
    k_per_item = forms.IntegerField(
        min_value=1, max_value=100, required=False, help_text="annotators per item; empty = the preset's default"
    )
    show_model_hints = forms.BooleanField(
        required=False, help_text="show model verdicts as hints, where the preset has them"
    )


class ImportForm(forms.Form):
    data = forms.FileField(help_text="JSONL or CSV, one item per line")
    images = forms.FileField(required=False, help_text="a .zip of the images the file names (optional)")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Membership.Role.choices)


@login_required
def project_create(request: HttpRequest) -> HttpResponse:
    if not selectors.can_create_projects(request.user):
        raise PermissionDenied("only researchers and admins can create projects")
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = projects.create_project(
                name=form.cleaned_data["name"],
                preset_key=form.cleaned_data["preset"],
                created_by=request.user,
                k_per_item=form.cleaned_data["k_per_item"],
                show_model_hints=form.cleaned_data["show_model_hints"],
            )
        except DomainError as exc:
            form_error(form, exc)
        else:
            return redirect("project_detail", project_id=project.id)
    return render(request, "annotation/project_new.html", {"form": form, "presets": PRESETS})


@login_required
def project_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    return render(
        request,
        "annotation/project_detail.html",
        {
            "project": project,
            "preset": project.preset,
            "progress": selectors.project_progress(project),
            "annotators": selectors.per_annotator_progress(project),
            "members": project.memberships.select_related("user").order_by("role", "user__username"),
            "imports": project.imports.all()[:10],
            "import_form": ImportForm(),
            "member_form": MemberForm(),
        },
    )


@login_required
@require_POST
def project_import(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "choose a JSONL or CSV file to import")
        return redirect("project_detail", project_id=project.id)
    data = form.cleaned_data["data"]
    images = form.cleaned_data.get("images")
    try:
        job = importing.start_import(
            project=project,
            user=request.user,
            data_name=data.name,
            data_stream=data.chunks(),
            images_name=images.name if images else None,
            images_stream=images.chunks() if images else None,
        )
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("project_detail", project_id=project.id)
    return redirect("import_detail", job_id=job.id)


@login_required
def import_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(ImportJob.objects.select_related("project"), pk=as_id(job_id))
    managed_project_or_403(request.user, job.project_id)
    reaper.check(job)  # a job whose worker died is shown re-queued or failed, never running for ever
    template = (
        "annotation/_import_status.html" if request.headers.get("HX-Request") else "annotation/import_detail.html"
    )
    return render(request, template, {"job": job, "project": job.project})


@login_required
@require_POST
def project_members(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    form = MemberForm(request.POST)
    if form.is_valid():
        user = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
        if user is None:
            messages.error(request, f"no user named {form.cleaned_data['username']!r}")
        else:
            projects.add_member(project=project, user=user, role=form.cleaned_data["role"])
            messages.success(request, f"{user.username} added as {form.cleaned_data['role']}")
    else:
        messages.error(request, "give a username and a role")
    return redirect("project_detail", project_id=project.id)


@login_required
@require_POST
def project_status(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    try:
        projects.set_project_status(project=project, status=request.POST.get("status", ""))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect(reverse("project_detail", args=[project.id]))
