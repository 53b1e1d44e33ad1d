"""Researcher pages for a project's study design: stratified samples (with a preview), assignment
plans (pre-assigned or pooled), hand (re)assignment, quality-control settings, Prolific
studies and the progress dashboard with CSV export.

Thin: one view per action (parse the form, call one service or selector, redirect or render);
GETs never write. The forms are in ``forms`` and ``plan_forms``, the reads in ``selectors``, the
paper's design as initial values in ``suggestions``, the dashboard's CSV in ``exports``. Domain
refusals are shown through ``core.pages``."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.access import managed_project_or_403
from annotation.models import Project
from annotation.selectors import project_progress
from core.errors import DomainError
from core.pages import form_error, form_problems, refused
from studies.models import AssignmentPlan

from . import crowd, dashboard, exports, plan_forms, plans, pool, quality, sampling, selectors, suggestions
from .forms import HandAssignForm, QCForm, ReassignForm, SampleForm, StudyForm
from .plan_forms import PlanForm


# --------------------------------------------------------------------------- samples
def render_design(
    request: HttpRequest, project: Project, form: SampleForm, preview: dict | None = None
) -> HttpResponse:
    return render(
        request,
        "studies/design.html",
        {
            "project": project,
            "form": form,
            "preview": preview,
            "samples": selectors.recent_samples(project),
            "plans": selectors.recent_plans(project),
            "meta_keys": selectors.meta_keys(project),
            **suggestions.suggestion(selectors.study_design(project)),
        },
        status=400 if form.is_bound and form.errors else 200,
    )


@login_required
@require_GET
def design(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    initial = suggestions.sample_initial(selectors.study_design(project))
    return render_design(request, project, SampleForm(initial=initial))


@login_required
@require_POST
def sample_preview(request: HttpRequest, project_id: int) -> HttpResponse:
    """The counts a sample would have, per stratum, before anything is drawn."""
    project = managed_project_or_403(request.user, project_id)
    form = SampleForm(request.POST)
    preview = None
    if form.is_valid():
        try:
            preview = sampling.plan_sample(project=project, **form.params()).report()
        except DomainError as exc:
            form_error(form, exc)
    if request.headers.get("HX-Request"):  # the button's htmx request: the counts in place (issue 25)
        return render(
            request,
            "studies/_sample_preview.html",
            {"form": form, "preview": preview, "partial": True},
            status=400 if form.errors else 200,
        )
    return render_design(request, project, form, preview)


@login_required
@require_POST
def sample_create(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    form = SampleForm(request.POST)
    if form.is_valid():
        try:
            sample = sampling.draw_sample(
                project=project, name=form.cleaned_data["name"], created_by=request.user, **form.params()
            )
        except DomainError as exc:
            form_error(form, exc)
        else:
            messages.success(request, _("sample drawn: %(n)s items") % {"n": sample.report["total_drawn"]})
            return redirect("sample_detail", project_id=project.id, sample_id=sample.id)
    return render_design(request, project, form)


@login_required
def sample_detail(request: HttpRequest, project_id: int, sample_id: int) -> HttpResponse:
    """The sample's items, and the form that assigns it (a plan)."""
    project = managed_project_or_403(request.user, project_id)
    sample = selectors.sample_or_404(project, sample_id)
    design = selectors.study_design(project)
    form = PlanForm(request.POST or None, initial=suggestions.plan_initial(design, project.k_per_item))
    forecast = None
    if request.method == "POST" and form.is_valid():
        try:
            plan = plans.create_plan(
                sample=sample,
                created_by=request.user,
                # places nobody can take are refused (nothing written) until confirmed
                refuse_unfilled=not form.cleaned_data["confirm_unfilled"],
                **plan_forms.plan_arguments(form),
            )
        except plans.UnfilledPlan as exc:
            form_error(form, exc)
            forecast = exc.forecast
        except DomainError as exc:
            form_error(form, exc)
        else:
            messages.success(request, plan_created_message(plan))
            return redirect("plan_detail", project_id=project.id, plan_id=plan.id)
    facts = selectors.plan_form_facts(project, selectors.meta_keys(project))
    return render(
        request,
        "studies/sample_detail.html",
        {
            "project": project,
            "sample": sample,
            "form": form,
            **suggestions.suggestion(design),
            **facts,
            "quota_rows": plan_forms.quota_rows(form, facts["profile_values"]),
            "forecast": forecast,
            "items": selectors.sample_members(sample),
        },
        status=400 if request.method == "POST" and form.errors else 200,
    )


def plan_created_message(plan: AssignmentPlan) -> str:
    """What a new plan did, in one line: its places and, pre-assigned, how many were assigned."""
    places = plan.report.get("slots", 0)
    if plan.mode == AssignmentPlan.Mode.PREASSIGNED:
        return _("plan created: %(n)s places, %(assigned)s assigned, %(unfilled)s not filled") % {
            "n": places,
            "assigned": plan.report.get("assignments_created", 0),
            "unfilled": plan.report.get("unfilled_slots", 0),
        }
    return _("plan created: %(n)s places in the pool") % {"n": places}


# --------------------------------------------------------------------------- plans
def managed_plan(request: HttpRequest, project_id: int, plan_id: int) -> tuple[Project, AssignmentPlan]:
    project = managed_project_or_403(request.user, project_id)
    return project, selectors.plan_or_404(project, plan_id)


def render_plan(
    request: HttpRequest,
    project: Project,
    plan: AssignmentPlan,
    *,
    hand: forms.Form | None = None,
    move: forms.Form | None = None,
) -> HttpResponse:
    bound = [f for f in (hand, move) if f is not None and f.is_bound and f.errors]
    return render(
        request,
        "studies/plan_detail.html",
        {
            "project": project,
            "plan": plan,
            "assignments": selectors.plan_assignments(plan),
            "hand": hand or HandAssignForm(prefix="hand"),
            "move": move or ReassignForm(prefix="move"),
            "strata": dashboard.progress_by_stratum(plan),
        },
        status=400 if bound else 200,
    )


@login_required
@require_GET
def plan_detail(request: HttpRequest, project_id: int, plan_id: int) -> HttpResponse:
    project, plan = managed_plan(request, project_id, plan_id)
    return render_plan(request, project, plan)


@login_required
@require_POST
def plan_hand_assign(request: HttpRequest, project_id: int, plan_id: int) -> HttpResponse:
    """Give one item to one annotator by hand, under the plan's rules unless forced."""
    project, plan = managed_plan(request, project_id, plan_id)
    form = HandAssignForm(request.POST, prefix="hand")
    if form.is_valid():
        d = form.cleaned_data
        try:
            item = selectors.latest_item(project, d["item"])
            made = plans.hand_assign(
                project=project, item=item, plan=plan, force=d["force"], rater=selectors.user_rater(d["username"])
            )
        except DomainError as exc:
            return refused(request, exc, "plan_detail", project_id=project.id, plan_id=plan.id)
        messages.success(
            request, _("assigned %(item)s to %(rater)s") % {"item": item.external_id, "rater": made.rater.name}
        )
        return redirect("plan_detail", project_id=project.id, plan_id=plan.id)
    return render_plan(request, project, plan, hand=form)


@login_required
@require_POST
def plan_reassign(request: HttpRequest, project_id: int, plan_id: int) -> HttpResponse:
    """Move an unfinished assignment to another annotator."""
    project, plan = managed_plan(request, project_id, plan_id)
    form = ReassignForm(request.POST, prefix="move")
    if form.is_valid():
        d = form.cleaned_data
        try:
            old = selectors.project_assignment(project, d["assignment"])
            new = plans.reassign(assignment=old, force=d["force"], to_rater=selectors.user_rater(d["username"]))
        except DomainError as exc:
            return refused(request, exc, "plan_detail", project_id=project.id, plan_id=plan.id)
        messages.success(
            request,
            _("assignment #%(old)s moved to %(rater)s (#%(new)s)")
            % {"old": old.id, "rater": new.rater.name, "new": new.id},
        )
        return redirect("plan_detail", project_id=project.id, plan_id=plan.id)
    return render_plan(request, project, plan, move=form)


@login_required
@require_POST
def plan_close(request: HttpRequest, project_id: int, plan_id: int) -> HttpResponse:
    project, plan = managed_plan(request, project_id, plan_id)
    plans.close_plan(plan=plan)
    return redirect("plan_detail", project_id=project.id, plan_id=plan.id)


@login_required
@require_POST
def plan_expire_leases(request: HttpRequest, project_id: int, plan_id: int) -> HttpResponse:
    """Return expired holds to the pool now (beat does it every minute anyway)."""
    project, plan = managed_plan(request, project_id, plan_id)
    n = pool.expire_leases(project=project)
    messages.success(request, _("%(n)s expired hold(s) returned to the pool") % {"n": n})
    return redirect("plan_detail", project_id=project.id, plan_id=plan.id)


# --------------------------------------------------------------------------- dashboard
@login_required
@require_GET
def dashboard_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    qc_on = quality.qc_enabled(project)
    # the paper's QC as the form's initial values until the project has its own
    qc = suggestions.qc_suggestion(selectors.study_design(project), quality.qc_settings(project), qc_enabled=qc_on)
    return render(
        request,
        "studies/dashboard.html",
        {
            "project": project,
            "progress": project_progress(project),
            "plans": selectors.plans_with_progress(project),
            "annotators": dashboard.progress_by_annotator(project),
            "throughput": dashboard.throughput(project),
            "qc_form": QCForm(initial=qc["qc_initial"]),
            "qc_on": qc_on,
            "qc_suggested": qc["qc_suggested"],
            "qc_summary": qc["qc_summary"],
            "studies": [
                (s, request.build_absolute_uri(reverse("crowd_entry", args=[s.token])))
                for s in selectors.project_studies(project)
            ],
            "study_form": StudyForm(),
        },
    )


@login_required
@require_POST
def qc_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    form = QCForm(request.POST)
    try:
        if not form.is_valid():
            raise DomainError("check the quality-control values: " + form_problems(form))
        quality.set_qc_settings(project=project, values=form.cleaned_data)
    except DomainError as exc:
        return refused(request, exc, "dashboard", project_id=project.id)
    messages.success(request, _("quality-control settings saved"))
    return redirect("dashboard", project_id=project.id)


@login_required
@require_POST
def annotator_pause(request: HttpRequest, project_id: int, rater_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    rater = selectors.rater_or_404(rater_id)
    quality.pause(project=project, rater=rater, reason="paused by a researcher")
    return redirect("dashboard", project_id=project.id)


@login_required
@require_POST
def annotator_resume(request: HttpRequest, project_id: int, rater_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    rater = selectors.rater_or_404(rater_id)
    quality.resume(project=project, rater=rater)
    return redirect("dashboard", project_id=project.id)


@login_required
@require_POST
def study_create(request: HttpRequest, project_id: int) -> HttpResponse:
    """A Prolific study link for the project."""
    project = managed_project_or_403(request.user, project_id)
    form = StudyForm(request.POST)
    try:
        if not form.is_valid():
            raise DomainError("a study needs a name, a completion code and items per participant")
        d = form.cleaned_data
        crowd.create_study(
            project=project,
            name=d["name"],
            completion_code=d["completion_code"],
            items_per_participant=d["items_per_participant"],
            prescreen=form.prescreen(),
        )
    except DomainError as exc:
        return refused(request, exc, "dashboard", project_id=project.id)
    messages.success(request, _("study created: give Prolific the study link below"))
    return redirect("dashboard", project_id=project.id)


@login_required
@require_POST
def study_toggle(request: HttpRequest, project_id: int, study_id: int) -> HttpResponse:
    """Close a study to new participants, or reopen it."""
    project = managed_project_or_403(request.user, project_id)
    study = selectors.study_of_project_or_404(project, study_id)
    crowd.set_study_active(study=study, active=not study.active)
    return redirect("dashboard", project_id=project.id)


@login_required
def dashboard_csv(request: HttpRequest, project_id: int, table: str) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    text = exports.dashboard_table(project, table)
    if text is None:
        return HttpResponse("unknown table", status=404)
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="project-{project.id}-{table}.csv"'
    return response
