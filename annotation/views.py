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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from benchmarks.registry import PRESETS
from core import reaper
from core.errors import DomainError
from core.pages import form_error

from . import examples, importing, projects, selectors
from .access import as_id, managed_project_or_403
from .assets import make_thumbnail, media_path, write_atomic
from .models import Asset, Assignment, ImportJob, Membership

# ------------------------------------------------------------------------- annotator


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
ASSIGNMENT_CHOICES = [
    ("plans", gettext_lazy("By study design: nothing is assigned until a plan assigns a sample")),
    ("default", gettext_lazy("Automatic: every annotator gets items until each item has k annotators")),
]


def preset_choices() -> list[tuple[str, str]]:
    """The preset select's options, named in the UI's language (read when a form is built)."""
    return [(k, f"{p.display_name} ({k})") for k, p in PRESETS.items()]


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))
    preset = forms.ChoiceField(choices=preset_choices, label=gettext_lazy("Preset"))
    k_per_item = forms.IntegerField(
        min_value=1,
        max_value=100,
        required=False,
        label=gettext_lazy("K per item"),
        help_text=gettext_lazy("annotators per item; empty = the preset's default"),
    )
    show_model_hints = forms.BooleanField(
        required=False,
        label=gettext_lazy("Show model hints"),
        help_text=gettext_lazy("show model verdicts as hints, where the preset has them"),
    )
    # every preset carries its paper's study design (issue 14): a form sent without the choice
    # (a script) starts the project on it too
    assignment = forms.ChoiceField(
        choices=ASSIGNMENT_CHOICES,
        initial="plans",
        required=False,
        label=gettext_lazy("Assignment"),
        widget=forms.RadioSelect,
    )


class ImportForm(forms.Form):
    data = forms.FileField(label=gettext_lazy("Data"), help_text=gettext_lazy("JSONL or CSV, one item per line"))
    images = forms.FileField(
        required=False,
        label=gettext_lazy("Images"),
        help_text=gettext_lazy("a .zip of the images the file names (optional)"),
    )


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, label=gettext_lazy("Username"))
    # annotators are who a project adds most; making someone a researcher is the deliberate choice
    role = forms.ChoiceField(
        choices=sorted(Membership.Role.choices, key=lambda c: c[0] != Membership.Role.ANNOTATOR),
        initial=Membership.Role.ANNOTATOR,
        label=gettext_lazy("Role"),
    )


class AssignmentModeForm(forms.Form):
    assignment = forms.ChoiceField(choices=ASSIGNMENT_CHOICES, label=gettext_lazy("Assignment"))


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
                assignment=form.cleaned_data["assignment"] or "plans",
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
            "assigns_new_members": projects.assigns_new_members(project),
        },
    )


@login_required
@require_POST
def project_import(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, _("choose a JSONL or CSV file to import"))
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
            messages.error(request, _("no user named %(name)r") % {"name": form.cleaned_data["username"]})
        else:
            projects.add_member(project=project, user=user, role=form.cleaned_data["role"])
            messages.success(request, member_added_message(project, user, form.cleaned_data["role"]))
    else:
        messages.error(request, _("give a username and a role"))
    return redirect("project_detail", project_id=project.id)


def member_added_message(project, user, role: str) -> str:
    """What adding a member did: for an annotator, how many items they have now, or why none."""
    if role != Membership.Role.ANNOTATOR:
        return _("%(user)s added as researcher") % {"user": user.username}
    if projects.assigns_new_members(project):
        n = Assignment.objects.filter(project=project, rater__user=user).count()
        return _("%(user)s added as annotator: %(n)d item(s) in their queue") % {"user": user.username, "n": n}
    return _("%(user)s added as annotator: no items assigned now; the study design's plans hand items out") % {
        "user": user.username
    }


@login_required
@require_POST
def project_assignment(request: HttpRequest, project_id: int) -> HttpResponse:
    """Switch the project between automatic assignment and assignment by study design."""
    project = managed_project_or_403(request.user, project_id)
    form = AssignmentModeForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("choose how items are assigned"))
        return redirect("project_detail", project_id=project.id)
    mode = form.cleaned_data["assignment"]
    try:
        n = projects.set_assignment_mode(project=project, mode=mode)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        if mode == "plans":
            messages.success(
                request,
                _("Items now go out by study design: %(n)d unopened automatic assignment(s) removed.") % {"n": n},
            )
        else:
            messages.success(request, _("Items now go out automatically: %(n)d assignment(s) made.") % {"n": n})
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


# ------------------------------------------------------------------------- item browser


@login_required
def preset_example(request: HttpRequest, preset_key: str, kind: str) -> HttpResponse:
    """A preset's example import file (``kind`` ``jsonl`` or ``zip``), for those who import:
    researchers and admins. It holds only the preset's demo items, nothing of any project."""
    if not (selectors.can_create_projects(request.user) or selectors.managed_projects(request.user).exists()):
        raise PermissionDenied(_("only researchers and admins import items"))
    try:
        preset = examples.example_preset(preset_key)
        body = examples.example_jsonl(preset.key) if kind == "jsonl" else examples.example_zip(preset.key)
    except DomainError as exc:
        raise Http404(exc.message) from None
    name = examples.file_names(preset)[kind]
    response = HttpResponse(body, content_type="application/zip" if kind == "zip" else "application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
