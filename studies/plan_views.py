"""Plan pages beside creating one (issue 14): the htmx preview of a plan form (the mix of places
per item and how many the current annotators can fill, writing nothing) and deleting a plan
after a confirmation page that counts what goes and what stays.

Thin, like ``studies.views``: parse, call one service or selector, render or redirect."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.access import managed_project_or_403
from core.errors import DomainError
from core.pages import form_problems

from . import plan_forms, plans, selectors
from .plan_forms import PlanForm
from .views import managed_plan


@login_required
@require_POST
def plan_preview(request: HttpRequest, project_id: int, sample_id: int) -> HttpResponse:
    """The plan the form describes, before anything is written (the form's htmx preview)."""
    project = managed_project_or_403(request.user, project_id)
    sample = selectors.sample_or_404(project, sample_id)
    form = PlanForm(request.POST)
    try:
        if not form.is_valid():
            raise DomainError(_("check the plan: %(problems)s") % {"problems": form_problems(form)})
        forecast = plans.forecast_plan(sample=sample, **plan_forms.forecast_arguments(form))
    except DomainError as exc:
        return render(request, "studies/_plan_preview.html", {"error": exc.message}, status=400)
    return render(request, "studies/_plan_preview.html", {"forecast": forecast})


@login_required
@require_http_methods(["GET", "POST"])
def plan_delete(request: HttpRequest, project_id: int, plan_id: int) -> HttpResponse:
    """GET: what deleting the plan releases and keeps; POST: delete it."""
    project, plan = managed_plan(request, project_id, plan_id)
    if request.method == "POST":
        try:
            done = plans.delete_plan(plan=plan)
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("plan_detail", project_id=project.id, plan_id=plan.id)
        messages.success(
            request,
            _(
                "Plan “%(name)s” deleted: %(released)d unstarted assignment(s) released; %(started)d started and "
                "%(submitted)d submitted kept outside any plan."
            )
            % {"name": plan.name, **done},
        )
        return redirect("design", project_id=project.id)
    return render(
        request,
        "studies/plan_delete.html",
        {"project": project, "plan": plan, "footprint": plans.plan_footprint(plan)},
    )
