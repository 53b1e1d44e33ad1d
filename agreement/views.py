"""The agreement report page (htmx polling for reports that run on a worker). Thin: parse the
query, call one service, and render the result as ``agreement.presentation`` shapes it
(formatting, heatmap colours and the judge-vs-human scatter as inline SVG)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.access import managed_project_or_403
from core import reaper
from core.errors import DomainError
from hvstats.alt_test import EPSILON_GUIDANCE

from . import selectors, services
from .models import AgreementReport
from .presentation import printable_context, report_context
from .services import ReportParams


@login_required
def report_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    q = request.GET
    ctx: dict[str, Any] = {"project": project, "q": q, "epsilon_guidance": EPSILON_GUIDANCE}
    try:
        params = ReportParams.from_query(q)
        ctx["params"] = params
        answer = services.report_for(project=project, params=params, user=request.user)
    except DomainError as exc:
        ctx["error"] = exc.message
        return render(request, "agreement/report.html", ctx, status=400)
    ctx.update(_answer_context(answer))
    return render(request, "agreement/report.html", ctx)


def _answer_context(answer: dict[str, Any] | AgreementReport) -> dict[str, Any]:
    """The stored report to show: the job (its status, progress and when it was computed) and the
    report itself, or, while it is updating, the last good one marked out of date."""
    if not isinstance(answer, AgreementReport):
        return report_context(answer)
    ctx: dict[str, Any] = {"job": answer, "last_good": getattr(answer, "last_good", None)}
    if answer.status == AgreementReport.Status.DONE:
        ctx.update(report_context(answer.result))
    elif answer.is_pending and ctx["last_good"] is not None:
        ctx.update(report_context(ctx["last_good"].result))
    return ctx


@login_required
def report_job(request: HttpRequest, project_id: int, job_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    job = reaper.check(get_object_or_404(AgreementReport, pk=job_id, project=project))  # worker died: say so
    ctx: dict[str, Any] = {
        "project": project,
        "job": job,
        "params": ReportParams(**job.params),
        "epsilon_guidance": EPSILON_GUIDANCE,
    }
    if job.status == AgreementReport.Status.DONE:
        # overtaken by new ratings while it ran: shown, but never as current
        ctx["out_of_date"] = not services.is_current(job)
        ctx.update(report_context(job.result))
    elif job.is_pending and (last_good := services.last_good_for(job)) is not None:
        ctx["last_good"] = last_good
        ctx.update(report_context(last_good.result))
    template = "agreement/_job.html" if request.headers.get("HX-Request") else "agreement/report.html"
    return render(request, template, ctx)


@login_required
def printable_report(request: HttpRequest, project_id: int) -> HttpResponse:
    """One printable page: the protocol's tables, the verdicts and the study's settings (issue 25).
    Researchers only; the same query parameters as the agreement page."""
    project = managed_project_or_403(request.user, project_id)
    ctx: dict[str, Any] = {"project": project, "epsilon_guidance": EPSILON_GUIDANCE}
    try:
        params = ReportParams.from_query(request.GET)
        ctx["params"] = params
        answer = services.report_for(project=project, params=params, user=request.user)
    except DomainError as exc:
        ctx["error"] = exc.message
        return render(request, "agreement/printable.html", ctx, status=400)
    if isinstance(answer, AgreementReport):
        ctx["job"] = answer
        ctx["last_good"] = getattr(answer, "last_good", None)
        # the report when done; while it updates, the last good one marked out of date
        shown = answer if answer.status == AgreementReport.Status.DONE else None
        if answer.is_pending:
            shown = ctx["last_good"]
        if shown is None:
            return render(request, "agreement/printable.html", ctx)
        answer = shown.result
    ctx.update(printable_context(answer, selectors.study_settings(project)))
    return render(request, "agreement/printable.html", ctx)
