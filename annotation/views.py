"""Server-rendered pages (htmx where a part refreshes). Thin: parse, call one service or
selector, render; domain refusals are shown through ``core.pages``.

Two GETs write on purpose, because the act is looking: opening an item marks it in progress
(and renews a pooled hold), and asking for the next item may claim one from a pool or inject
a quality-control item (``studies.next_item``)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from benchmarks.registry import PRESETS
from core import reaper
from core.errors import DomainError
from core.pages import form_error
from studies.crowd import participant_for as crowd_participant_for
from studies.next_item import next_assignment, why_nothing

from . import annotating, browse, examples, hotpath, importing, projects, selectors
from .access import annotator_project_or_404, as_id, managed_project_or_403
from .assets import make_thumbnail, media_path, write_atomic
from .models import Asset, Assignment, ImportJob, Item, Membership
from .presentation import item_render_context, question_blocks, stimulus_blocks
from .rubric import CANONICAL_LOCALE, Rubric

QUEUE_PAGE = 50
BROWSER_PAGE = 50


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
    creds = hotpath.session_credentials(request) if settings.HV_LEAN_API else None
    password = hotpath.session_password(*creds) if creds is not None else None
    if password is None:
        return _annotate_checked(request, assignment_id)
    if request.method == "POST":
        return _annotate_post_lean(request, assignment_id, creds, password)
    loaded = hotpath.load_mine(
        uid=creds[0], password=password, assignment_id=assignment_id, kind="open", with_user=True
    )
    if loaded is None:
        hotpath.forget_session(*creds)
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


def _annotate_post_lean(
    request: HttpRequest, assignment_id: int, creds: tuple[int, str], password: str
) -> HttpResponse:
    """The form of a plain logged-in session: locked, checked, stored and the next item found by
    ``annotating.submit_mine``; a refusal shows the page again with the answers and errors."""
    parsed: dict = {}

    def read_form(assignment: Assignment) -> dict:
        parsed["answers"] = assignment.project.rubric_version.parsed().parse_form(
            request.POST, item=item_render_context(assignment.item)
        )
        return parsed["answers"]

    done = annotating.submit_mine(
        uid=creds[0],
        password=password,
        assignment_id=assignment_id,
        answers=read_form,
        duration_ms=_form_duration(request),
        edit=request.POST.get("mode") == "edit",
        with_user=True,
        locale=request.POST.get("locale", ""),  # the wording the form was rendered in
    )
    if done.loaded is None:
        hotpath.forget_session(*creds)
        return _annotate_checked(request, assignment_id)
    request.user = done.loaded.user
    assignment = done.loaded.assignment
    if done.error is None:
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
            nxt = next_assignment(rater=rater, project=project)
            if nxt is None:
                return redirect("next_item", project_id=project.id)
            return redirect("annotate", assignment_id=nxt.id)
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


def rubric_wording(request: HttpRequest, rubric: Rubric) -> dict:
    """Which wording of the rubric the annotate page shows: the translation into the UI's language
    when the rubric has one (unless ``?wording=original`` asks for the paper's), else the paper's
    canonical wording. ``locale`` is what the form posts back, to be stored with the answer;
    ``note`` says what the annotator sees, when it is not simply the UI's language."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    available = rubric.pick_locale(language)
    original = request.GET.get("wording") == "original"
    locale = None if original else available
    if locale:
        note = _("This rubric is translated from the paper's original English wording, which is the reference.")
    elif available:
        note = _("Shown in the paper's original English wording.")
    elif language.split("-")[0] != CANONICAL_LOCALE:
        note = _(
            "This rubric has no translation into %(language)s; it is shown in the paper's original English wording."
        ) % {"language": translation.get_language_info(language)["name_local"]}
    else:
        note = ""
    return {
        "rubric": rubric.localized(locale),
        "locale": locale or CANONICAL_LOCALE,
        "translated": bool(locale),
        "switchable": bool(available),
        "note": note,
    }


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
ASSIGNMENT_CHOICES = [
    ("plans", gettext_lazy("By study design: nothing is assigned until a plan assigns a sample")),
    ("default", gettext_lazy("Automatic: every annotator gets items until each item has k annotators")),
]


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))
    preset = forms.ChoiceField(
        choices=[(k, f"{p.name} ({k})") for k, p in PRESETS.items()], label=gettext_lazy("Preset")
    )
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
def item_browser(request: HttpRequest, project_id: int) -> HttpResponse:
    """The project's items: search, filters (stratum, status, decision, sample), counts per
    status among the matches, one page at a time; each row opens the annotator's view."""
    project = managed_project_or_403(request.user, project_id)
    error, status = "", 200
    try:
        filters = browse.ItemFilters.from_query(request.GET, project)
    except DomainError as exc:
        error, status, filters = exc.message, 400, browse.ItemFilters()
    items = browse.browse_items(project, filters)
    page = Paginator(items, BROWSER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "annotation/items.html",
        {
            "project": project,
            "filters": filters,
            "error": error,
            "page": page,
            "rows": browse.item_rows(list(page.object_list)),
            "matched": page.paginator.count,
            "total": Item.objects.filter(project=project).count(),
            "counts": [
                (s, label, n)
                for (s, label), n in zip(
                    browse.ITEM_STATUSES.items(), browse.status_counts(items).values(), strict=True
                )
            ],
            "strata": browse.stratum_options(project),
            "statuses": browse.ITEM_STATUSES,
            "decisions": browse.DECISIONS,
            "samples": browse.project_samples(project),
            "query": urlencode(filters.as_query()),
        },
        status=status,
    )


@login_required
def item_preview(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    """One item exactly as the annotate page renders it for an annotator (the same template and
    renderer), read-only: no assignment is opened, nothing can be submitted."""
    project = managed_project_or_403(request.user, project_id)
    item = get_object_or_404(Item, pk=as_id(item_id), project=project)
    wording = rubric_wording(request, project.rubric_version.parsed())
    rubric = wording["rubric"]
    item_ctx = item_render_context(item)
    return render(
        request,
        "annotation/annotate.html",
        {
            # the template reads the item through its assignment; a preview has none, and an
            # empty presentation shows pairs in the item's declared order
            "assignment": {"item": item},
            "project": project,
            "rubric": rubric,
            "wording": wording,
            "stimulus": stimulus_blocks(project=project, rubric=rubric, item_ctx=item_ctx, presentation={}),
            "questions": question_blocks(rubric=rubric, item_ctx=item_ctx, answers=None, errors=None),
            "mode": "submit",
            "editable": False,
            "preview": True,
            "item": item,
        },
    )


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
