"""Pages of active samples (issue 27): choose a judge and its uncertainty, see the
uncertainty's distribution, draw the first round, release the next rounds. Thin: parse, call
one service, redirect or render. The drawn rounds are ordinary samples, assigned on their
sample page with the usual plans."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from annotation.access import managed_project_or_403
from annotation.models import Project
from core.errors import DomainError
from core.pages import refused
from studies.models import Sample

from . import active_pages
from .active_forms import NextRoundForm


def _render(
    request: HttpRequest,
    project: Project,
    data: Any,
    *,
    show: bool = False,
    bound: bool = False,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    ctx = active_pages.page_context(project, data, show=show, bound=bound)
    if ctx["refusal"] and not error:
        error, status = ctx["refusal"], max(status, 400)
    ctx.update(project=project, error=error)
    return render(request, "agreement/active.html", ctx, status=status)


@login_required
@require_GET
def active_page(request: HttpRequest, project_id: int) -> HttpResponse:
    """The page; with ``source`` in the query, the uncertainty's distribution (a link to it)."""
    project = managed_project_or_403(request.user, project_id)
    return _render(request, project, request.GET or None, show=bool(request.GET.get("source")))


@login_required
@require_POST
def active_draw(request: HttpRequest, project_id: int) -> HttpResponse:
    """The page's one form: ``action=show`` shows the chosen uncertainty (the form kept as typed),
    otherwise the first round is drawn; a refusal is shown on the page with its status."""
    project = managed_project_or_403(request.user, project_id)
    if request.POST.get("action") == "show":
        return _render(request, project, request.POST, show=True)
    try:
        sample = active_pages.draw_from_form(project, request.POST, request.user)
    except DomainError as exc:
        return _render(request, project, request.POST, bound=True, error=exc.message, status=exc.http_status)
    n = sample.report["total_drawn"]
    messages.success(
        request,
        ngettext("Drew %(n)d item: assign it with a plan below.", "Drew %(n)d items: assign them with a plan below.", n)
        % {"n": n},
    )
    return redirect(reverse("sample_detail", args=[project.id, sample.id]))


@login_required
@require_POST
def active_next_round(request: HttpRequest, project_id: int, sample_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    first = get_object_or_404(Sample, pk=sample_id, project=project, design__kind="active", design__round=0)
    form = NextRoundForm(request.POST)
    form.is_valid()
    try:
        sample = active_pages.next_round(first, refit=bool(form.cleaned_data.get("refit")), user=request.user)
    except DomainError as exc:
        return refused(request, exc, reverse("active_sample", args=[project.id]))
    n = sample.report["total_drawn"]
    messages.success(
        request,
        ngettext("Round %(round)d: drew %(n)d item.", "Round %(round)d: drew %(n)d items.", n)
        % {"round": sample.design["round"] + 1, "n": n},
    )
    return redirect(reverse("sample_detail", args=[project.id, sample.id]))
