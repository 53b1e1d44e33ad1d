"""The agreement report page (htmx polling while a stored report is computed). Thin: parse the
query, call one service, and render the result as ``agreement.presentation`` shapes it
(formatting, heatmap colours and the judge-vs-human scatter as inline SVG).

Every report shown is a stored :class:`AgreementReport` (``services.report_for``): a done
report never changes, so its rendered HTML is cached by its id, the language and what the
viewer may see (:func:`_rendered_report`); a warm page reads neither the result JSON nor runs
the presentation (issue 35: the page of every demo study within 200 ms warm)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from annotation.access import managed_project_or_403
from core import reaper
from core.errors import DomainError
from hvstats.alt_test import EPSILON_GUIDANCE

from . import selectors, services
from .models import AgreementReport
from .presentation import report_context, study_context
from .services import ReportParams

#: how long a stored report's rendered HTML is kept (a done report never changes; superseded
#: ones are deleted, and their entries simply expire)
RENDERED_TTL_S = 24 * 3600


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
    _show(request, ctx, answer)
    return render(request, "agreement/report.html", ctx)


def _show(request: HttpRequest, ctx: dict[str, Any], answer: AgreementReport, *, printable: bool = False) -> None:
    """The stored report to show, into ``ctx``: the job (its status, progress and when it was
    computed) and the report itself, or, while it is updating, the last good one marked out of
    date (``_freshness.html``)."""
    ctx["job"] = answer
    ctx["last_good"] = getattr(answer, "last_good", None)
    shown = answer if answer.status == AgreementReport.Status.DONE else None
    if answer.is_pending:
        shown = ctx["last_good"]
    if shown is not None:
        ctx.update(_rendered_report(request, ctx, shown, printable=printable))


def _rendered_report(
    request: HttpRequest, ctx: dict[str, Any], shown: AgreementReport, *, printable: bool
) -> dict[str, Any]:
    """``agreement/_report.html`` of a done report, rendered once per report, language, page and
    staff flag (the fragment links items for staff only), then read from the cache; with the two
    lists the settings form needs from the result."""
    # the id with what it was computed from and when: an id a test database hands out again never
    # finds another report's page
    stamp = shown.finished_at.timestamp() if shown.finished_at else ""
    key = ":".join(
        str(part)
        for part in (
            "agreement-report-html",
            shown.pk,
            shown.data_signature,
            stamp,
            get_language(),
            int(printable),
            int(request.user.is_staff),
        )
    )
    kept = cache.get(key)
    if kept is None:
        result = shown.result
        shaped = {**ctx, **report_context(result), "printable": printable}
        kept = {
            "html": render_to_string("agreement/_report.html", shaped, request),
            "available_fields": result.get("available_fields", []),
            "available_strata": result.get("available_strata", []),
        }
        cache.set(key, kept, RENDERED_TTL_S)
    # the rendered fragment is the template's own output, escaped when it was rendered
    return {
        "report_html": mark_safe(kept["html"]),
        "result": {"available_fields": kept["available_fields"], "available_strata": kept["available_strata"]},
    }


@login_required
def report_job(request: HttpRequest, project_id: int, job_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    job = reaper.check(
        get_object_or_404(AgreementReport.objects.defer("result"), pk=job_id, project=project)
    )  # worker died: say so
    ctx: dict[str, Any] = {
        "project": project,
        "params": ReportParams(**job.params),
        "epsilon_guidance": EPSILON_GUIDANCE,
    }
    job.last_good = services.last_good_for(job)
    _show(request, ctx, job)
    if job.status == AgreementReport.Status.DONE:
        # overtaken by new ratings while it ran: shown, but never as current
        ctx["out_of_date"] = not services.is_current(job)
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
    _show(request, ctx, answer, printable=True)
    if "report_html" in ctx:
        ctx.update(study_context(selectors.study_settings(project)))
    return render(request, "agreement/printable.html", ctx)
