"""Researcher pages for a project's study design: stratified samples (with a preview), assignment
plans (pre-assigned or pooled), hand (re)assignment, quality-control settings, Prolific
studies and the progress dashboard with CSV export.

Thin: one view per action (parse, call one service, redirect or render); GETs never write.
Domain refusals are shown through ``core.pages``."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from annotation.access import as_id, managed_project_or_403
from annotation.models import Assignment, AssignmentPlan, CrowdStudy, Item, Project, Rater, Sample
from annotation.projects import rater_for_user
from annotation.selectors import project_progress
from benchmarks.base import STRATA_KEYS, StudyDesign
from core import csvsafe
from core.errors import DomainError
from core.pages import form_error, form_problems, refused

from . import crowd, dashboard, plan_forms, plans, pool, quality, sampling
from .rules import format_balance_text


class SampleForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200, required=False)
    strata = forms.MultipleChoiceField(
        choices=[(k, k) for k in STRATA_KEYS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("Strata columns"),
    )
    meta_keys = forms.CharField(
        required=False,
        label=gettext_lazy("Strata meta keys"),
        help_text=gettext_lazy("comma-separated keys of the items' meta, e.g. pipeline, question_id"),
    )
    allocation = forms.ChoiceField(label=gettext_lazy("Allocation"), choices=Sample.Allocation.choices)
    total_size = forms.IntegerField(
        label=gettext_lazy("Total size"), min_value=1, required=False, help_text=gettext_lazy("a total sample size ...")
    )
    per_stratum = forms.IntegerField(
        label=gettext_lazy("Per stratum"),
        min_value=1,
        required=False,
        help_text=gettext_lazy("... or a size per stratum"),
    )
    seed = forms.IntegerField(
        label=gettext_lazy("Seed"), initial=1, help_text=gettext_lazy("the same seed gives the same sample")
    )

    def keys(self) -> list[str]:
        extra = [k.strip() for k in self.cleaned_data.get("meta_keys", "").split(",") if k.strip()]
        return list(self.cleaned_data.get("strata") or []) + extra

    def params(self) -> dict:
        d = self.cleaned_data
        return {
            "strata_keys": self.keys(),
            "allocation": d["allocation"],
            "total_size": d.get("total_size"),
            "per_stratum": d.get("per_stratum"),
            "seed": d["seed"],
        }


class PlanForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200, required=False)
    mode = forms.ChoiceField(
        label=gettext_lazy("Mode"), choices=AssignmentPlan.Mode.choices, initial=AssignmentPlan.Mode.POOLED
    )
    k = forms.IntegerField(min_value=1, max_value=100, label=gettext_lazy("Annotators per item (k)"))
    # the datalists (studies/plan_forms.py) offer the keys and values in the annotators' profiles
    eligibility_attribute = forms.CharField(
        required=False,
        label=gettext_lazy("Eligibility: annotator attribute"),
        help_text=gettext_lazy("e.g. nationality"),
        widget=forms.TextInput(attrs={"list": "profile-keys", "autocomplete": "off"}),
    )
    eligibility_item_key = forms.CharField(
        required=False,
        label=gettext_lazy("... must equal item key"),
        help_text=gettext_lazy("e.g. country (a strata column or a meta key)"),
        widget=forms.TextInput(attrs={"list": "item-keys", "autocomplete": "off"}),
    )
    balance_attribute = forms.CharField(
        required=False,
        label=gettext_lazy("Balance: annotator attribute"),
        help_text=gettext_lazy("e.g. nationality"),
        widget=forms.TextInput(attrs={"list": "profile-keys", "autocomplete": "off"}),
    )
    balance_quota = forms.CharField(
        required=False, label=gettext_lazy("... per item"), help_text=gettext_lazy("e.g. China:2, Germany:2")
    )
    cap_per_annotator = forms.IntegerField(min_value=1, required=False, label=gettext_lazy("Cap per annotator"))
    lease_minutes = forms.IntegerField(
        label=gettext_lazy("Lease minutes"),
        min_value=1,
        max_value=10080,
        required=False,
        help_text=gettext_lazy("pooled: how long an opened item is held (empty = default)"),
    )
    take_over = forms.BooleanField(
        required=False,
        initial=True,
        label=gettext_lazy("Plans replace the default assignment"),
        help_text=gettext_lazy("removes unopened 'every annotator gets every item' rows"),
    )
    confirm_unfilled = forms.BooleanField(
        required=False,
        label=gettext_lazy("Create even if places cannot be filled now"),
        help_text=gettext_lazy(
            "without it, a plan with places no current annotator can take is refused and nothing changes"
        ),
    )


class HandAssignForm(forms.Form):
    item = forms.CharField(max_length=200, label=gettext_lazy("Item id (external)"))
    username = forms.CharField(label=gettext_lazy("Username"), max_length=150)
    force = forms.BooleanField(
        label=gettext_lazy("Force"), required=False, help_text=gettext_lazy("even if the plan's rules say not eligible")
    )


class ReassignForm(forms.Form):
    assignment = forms.IntegerField(min_value=1, label=gettext_lazy("Assignment #"))
    username = forms.CharField(max_length=150, label=gettext_lazy("New annotator"))
    force = forms.BooleanField(label=gettext_lazy("Force"), required=False)


class QCForm(forms.Form):
    attention_rate = forms.FloatField(label=gettext_lazy("Attention rate"), min_value=0, max_value=1, required=False)
    attention_pause_after = forms.IntegerField(
        label=gettext_lazy("Attention pause after"),
        min_value=0,
        required=False,
        help_text=gettext_lazy("failures that pause (0 = never)"),
    )
    gold_rate = forms.FloatField(label=gettext_lazy("Gold rate"), min_value=0, max_value=1, required=False)
    gold_threshold = forms.FloatField(label=gettext_lazy("Gold threshold"), min_value=0, max_value=1, required=False)
    gold_min_answered = forms.IntegerField(label=gettext_lazy("Gold min answered"), min_value=0, required=False)
    gold_pause = forms.BooleanField(label=gettext_lazy("Gold pause"), required=False)
    gold_tolerance = forms.IntegerField(label=gettext_lazy("Gold tolerance"), min_value=0, required=False)
    repeat_rate = forms.FloatField(label=gettext_lazy("Repeat rate"), min_value=0, max_value=1, required=False)
    min_seconds = forms.IntegerField(label=gettext_lazy("Min seconds"), min_value=0, required=False)
    rationale_question = forms.CharField(label=gettext_lazy("Rationale question"), required=False, max_length=100)
    rationale_min_chars = forms.IntegerField(label=gettext_lazy("Rationale min chars"), min_value=0, required=False)


class StudyForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    completion_code = forms.CharField(label=gettext_lazy("Completion code"), max_length=64)
    items_per_participant = forms.IntegerField(
        label=gettext_lazy("Items per participant"), min_value=1, max_value=10000, initial=10
    )
    prescreen_attribute = forms.CharField(
        label=gettext_lazy("Prescreen attribute"),
        required=False,
        help_text=gettext_lazy("e.g. nationality (asked before starting)"),
    )
    prescreen_label = forms.CharField(
        label=gettext_lazy("Prescreen label"), required=False, help_text=gettext_lazy("e.g. What is your nationality?")
    )
    prescreen_choices = forms.CharField(
        label=gettext_lazy("Prescreen choices"),
        required=False,
        help_text=gettext_lazy("comma-separated, e.g. China, Germany"),
    )


def user_rater(username: str) -> Rater:
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise DomainError(f"no user named {username!r}", code="not_found")
    return rater_for_user(user)


def meta_keys(project: Project) -> list[str]:
    first = Item.objects.filter(project=project).order_by("id").values_list("meta", flat=True)[:50]
    return sorted({k for m in first for k in (m or {}) if not k.startswith("expected.") and k != "qc"})


# --------------------------------------------------------------------------- the paper's design
def study_design(project: Project) -> StudyDesign | None:
    """The preset's study design (the paper's), offered as initial form values, never applied."""
    return project.preset.study_design


def suggestion(project: Project) -> dict:
    """Template context of the "Suggested by <paper>" lines: ``suggested`` and ``summary``."""
    design = study_design(project)
    return {"suggested": design, "summary": design_summary(design) if design else {}}


def design_summary(design: StudyDesign) -> dict[str, str]:
    """The paper's design in words, per form (``sample``, ``plan``, ``qc``; "" = nothing given) and
    ``all`` of it."""
    sample = []
    if design.sample_size:
        sample.append(f"{design.sample_size} items")
    if design.sample_strata:
        sample.append("stratified by " + " × ".join(design.sample_strata))
    if design.sample_allocation:
        sample.append(f"{design.sample_allocation} allocation")
    plan = [f"k = {design.k}"] if design.k else []
    plan += [f"eligibility {r['attribute']} = item {r['item_key']}" for r in design.eligibility]
    if design.balance:
        plan.append(f"balance {design.balance['attribute']} {format_balance_text(design.balance)}")
    if design.cap_per_annotator:
        plan.append(f"at most {design.cap_per_annotator} items per annotator")
    qc = [f"{k.replace('_', ' ')} = {v}" for k, v in design.qc.items()]
    parts = {"sample": ", ".join(sample), "plan": ", ".join(plan), "qc": ", ".join(qc)}
    labels = {"sample": "sample", "plan": "assignment", "qc": "quality control"}
    parts["all"] = "; ".join(f"{labels[k]} {v}" for k, v in parts.items() if v)
    return parts


def sample_initial(design: StudyDesign | None) -> dict:
    initial: dict = {"allocation": "equal", "seed": 1}
    if design is None:
        return initial
    initial["strata"] = [k for k in design.sample_strata if k in STRATA_KEYS]
    extra = [k for k in design.sample_strata if k not in STRATA_KEYS]
    if extra:
        initial["meta_keys"] = ", ".join(extra)
    if design.sample_size:
        initial["total_size"] = design.sample_size
    if design.sample_allocation:
        initial["allocation"] = design.sample_allocation
    return initial


def plan_initial(project: Project, design: StudyDesign | None) -> dict:
    initial: dict = {"k": project.k_per_item, "take_over": True}
    if design is None:
        return initial
    if design.k:
        initial["k"] = design.k
    if design.eligibility:  # the form takes one rule
        initial["eligibility_attribute"] = design.eligibility[0]["attribute"]
        initial["eligibility_item_key"] = design.eligibility[0]["item_key"]
    if design.balance:
        initial["balance_attribute"] = design.balance["attribute"]
        initial["balance_quota"] = format_balance_text(design.balance)
    if design.cap_per_annotator:
        initial["cap_per_annotator"] = design.cap_per_annotator
    return initial


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
            "samples": project.samples.all()[:50],
            "plans": project.plans.select_related("sample")[:50],
            "meta_keys": meta_keys(project),
            **suggestion(project),
        },
        status=400 if form.is_bound and form.errors else 200,
    )


@login_required
@require_GET
def design(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    return render_design(request, project, SampleForm(initial=sample_initial(study_design(project))))


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
    sample = get_object_or_404(Sample, pk=as_id(sample_id), project=project)
    form = PlanForm(request.POST or None, initial=plan_initial(project, study_design(project)))
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
    return render(
        request,
        "studies/sample_detail.html",
        {
            "project": project,
            "sample": sample,
            "form": form,
            **suggestion(project),
            **plan_forms.form_context(project, form, meta_keys(project)),
            "forecast": forecast,
            "items": sample.members.select_related("item").order_by("stratum", "item__external_id")[:500],
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
    plan = get_object_or_404(AssignmentPlan.objects.select_related("sample"), pk=as_id(plan_id), project=project)
    return project, plan


def render_plan(
    request: HttpRequest,
    project: Project,
    plan: AssignmentPlan,
    *,
    hand: forms.Form | None = None,
    move: forms.Form | None = None,
) -> HttpResponse:
    assignments = (
        Assignment.objects.filter(plan=plan)
        .select_related("item", "rater")
        .order_by("item__external_id", "rater__name")[:500]
    )
    bound = [f for f in (hand, move) if f is not None and f.is_bound and f.errors]
    return render(
        request,
        "studies/plan_detail.html",
        {
            "project": project,
            "plan": plan,
            "assignments": assignments,
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
            item = Item.objects.filter(project=project, external_id=d["item"].strip()).order_by("-version").first()
            if item is None:
                raise DomainError(f"no item {d['item']!r} in this project", code="not_found")
            made = plans.hand_assign(
                project=project, item=item, plan=plan, force=d["force"], rater=user_rater(d["username"])
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
            old = Assignment.objects.filter(pk=d["assignment"], project=project).first()
            if old is None:
                raise DomainError("no such assignment in this project", code="not_found")
            new = plans.reassign(assignment=old, force=d["force"], to_rater=user_rater(d["username"]))
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
    qc_initial = quality.qc_settings(project)
    suggested = study_design(project)
    qc_suggested = suggested if suggested and suggested.qc and not quality.qc_enabled(project) else None
    if qc_suggested:  # the paper's QC as the form's initial values until the project has its own
        qc_initial = {**qc_initial, **qc_suggested.qc}
    return render(
        request,
        "studies/dashboard.html",
        {
            "project": project,
            "progress": project_progress(project),
            "plans": [(p, dashboard.progress_by_stratum(p)) for p in project.plans.select_related("sample")],
            "annotators": dashboard.progress_by_annotator(project),
            "throughput": dashboard.throughput(project),
            "qc_form": QCForm(initial=qc_initial),
            "qc_on": quality.qc_enabled(project),
            "qc_suggested": qc_suggested,
            "qc_summary": design_summary(qc_suggested)["qc"] if qc_suggested else "",
            "studies": [
                (s, request.build_absolute_uri(reverse("crowd_entry", args=[s.token]))) for s in project.studies.all()
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
    rater = get_object_or_404(Rater, pk=as_id(rater_id))
    quality.pause(project=project, rater=rater, reason="paused by a researcher")
    return redirect("dashboard", project_id=project.id)


@login_required
@require_POST
def annotator_resume(request: HttpRequest, project_id: int, rater_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    rater = get_object_or_404(Rater, pk=as_id(rater_id))
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
        prescreen = []
        if d["prescreen_attribute"]:
            prescreen = [
                {
                    "attribute": d["prescreen_attribute"],
                    "label": d["prescreen_label"],
                    "choices": [c for c in d["prescreen_choices"].split(",") if c.strip()],
                }
            ]
        crowd.create_study(
            project=project,
            name=d["name"],
            completion_code=d["completion_code"],
            items_per_participant=d["items_per_participant"],
            prescreen=prescreen,
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
    study = get_object_or_404(CrowdStudy, pk=as_id(study_id), project=project)
    crowd.set_study_active(study=study, active=not study.active)
    return redirect("dashboard", project_id=project.id)


@login_required
def dashboard_csv(request: HttpRequest, project_id: int, table: str) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="project-{project.id}-{table}.csv"'
    writer = csvsafe.writer(response)  # formulas defused in every cell, line breaks quoted
    if table == "annotators":
        cols = [
            "name",
            "attributes",
            "assigned",
            "in_progress",
            "submitted",
            "skipped",
            "expired",
            "attention_answered",
            "attention_failed",
            "gold_answered",
            "gold_accuracy",
            "repeats",
            "consistency",
            "paused",
            "at_risk",
        ]
        writer.writerow(cols)
        for row in dashboard.progress_by_annotator(project):
            row["attributes"] = ";".join(f"{k}={v}" for k, v in sorted(row["attributes"].items()))
            writer.writerow([row[c] for c in cols])
    elif table == "strata":
        cols = [
            "plan",
            "stratum",
            "items",
            "places",
            "assigned",
            "in_progress",
            "submitted",
            "skipped",
            "expired",
            "open_in_pool",
            "percent",
        ]
        writer.writerow(cols)
        for plan in project.plans.all():
            for row in dashboard.progress_by_stratum(plan):
                writer.writerow([plan.name] + [row[c] for c in cols[1:]])
    elif table == "throughput":
        writer.writerow(["hour", "submitted"])
        for row in dashboard.throughput(project, hours=24 * 30):
            writer.writerow([row["hour"].isoformat(), row["submitted"]])
    else:
        return HttpResponse("unknown table", status=404)
    return response


def csv_safe(value: object) -> object:
    """A dashboard cell: formulas defused by the platform's one rule (:mod:`core.csvsafe`)."""
    return csvsafe.csv_cell(value)
