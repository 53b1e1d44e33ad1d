"""The curation page: policy form with an htmx preview by stratum, apply, decisions with manual
override, revision re-import, exports with a progress bar (htmx polling) and download links.
Thin: parse the form, call one service, render."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from annotation.access import managed_project_or_403
from annotation.models import Item, Project
from annotation.selectors import managed_projects
from core import reaper
from core.errors import DomainError
from curation.browse import stratum_keys

from . import element_form, export_formats, selectors, services
from .exports import content_type, file_path, main_file
from .models import STATUS_CHOICES, AcceptancePolicy, Export
from .policy import AGGREGATION_HELP, AGGREGATIONS, STATUSES, TIES

POLICY_KEYS = ("rule", "aggregation", "tie", "judge_screening", "min_human_ratings", "revise_if", "element_filter")
#: decisions shown per page of the decisions list
DECISION_ROWS = 100
DECISION_LABELS = dict(STATUS_CHOICES)
TIE_LABELS = dict(AcceptancePolicy.Tie.choices)


def _project(request: HttpRequest, project_id: int) -> Project:
    return managed_project_or_403(request.user, project_id)


def applied_message(report: services.ApplyReport) -> str:
    """What applying the policy did, as a sentence (not the counts' dict)."""
    c = report.counts
    counts = ", ".join(
        [
            _("%(n)d accepted") % {"n": c.get("accepted", 0)},
            _("%(n)d rejected") % {"n": c.get("rejected", 0)},
            _("%(n)d need revision") % {"n": c.get("needs_revision", 0)},
            _("%(n)d pending") % {"n": c.get("pending", 0)},
        ]
    )
    changed = ngettext("%(n)d decision changed", "%(n)d decisions changed", report.changed) % {"n": report.changed}
    kept = ngettext("%(n)d manual decision kept", "%(n)d manual decisions kept", report.kept_manual) % {
        "n": report.kept_manual
    }
    return _("Policy applied: %(counts)s (%(changed)s, %(kept)s).") % {
        "counts": counts,
        "changed": changed,
        "kept": kept,
    }


def override_message(item: Item, status: str) -> str:
    """A manual decision, as a sentence naming the item and the decision in words."""
    label = str(DECISION_LABELS.get(status, status)).lower()
    return _("Item %(item)s (version %(version)d) is now %(status)s.") % {
        "item": item.external_id,
        "version": item.version,
        "status": label,
    }


def _policy_from_form(data, project: Project, *, strict: bool = True) -> dict[str, Any]:
    """The raw policy a form sent. The element filter comes from its form (``element_form``);
    a client that sends only the JSON ``element_filter`` still gets it. ``strict=False`` (the
    page shown again after a refusal) never refuses: the filter's fields are shown as sent."""
    raw = {k: data.get(k) for k in POLICY_KEYS if k != "element_filter" and data.get(k) is not None}
    raw["judge_screening"] = data.get("judge_screening") in ("on", "1", "true")
    ef = element_form.filter_from_post(data, project.rubric_version.parsed()) if strict else None
    if ef is None and data.get("element_filter") is not None and data.get("ef_mode") in (None, "json"):
        ef = data.get("element_filter")
    if ef is not None:
        raw["element_filter"] = ef
    return raw


def _element_filter_text(policy: dict[str, Any]) -> str:
    ef = policy.get("element_filter")
    if isinstance(ef, str):
        return ef
    return json.dumps(ef, ensure_ascii=False) if ef else ""


def _context(project: Project, request: HttpRequest, **extra: Any) -> dict[str, Any]:
    status = request.GET.get("status") or None
    policy = extra.pop("policy", None) or services.current_policy(project)
    rubric = project.rubric_version.parsed()
    # a refused POST shows the element filter's fields as they were sent; a GET, the policy's
    ef_state = element_form.state_from_post(request.POST, rubric, policy.get("element_filter"))
    return {
        "project": project,
        "policy": policy,
        "element_filter_text": _element_filter_text(policy),
        "ef": element_form.template_context(ef_state, rubric),
        "aggregations": AGGREGATIONS,
        "aggregation_help": [(a, _(AGGREGATION_HELP[a])) for a in AGGREGATIONS],
        "ties": TIES,
        # the choices as the page names them, in the UI's language (the values stay the policy's)
        "tie_choices": [(t, TIE_LABELS.get(t, t)) for t in TIES],
        "statuses": STATUSES,
        "status_choices": [(s, DECISION_LABELS.get(s, s)) for s in STATUSES],
        # the strata columns items fill and the items' meta keys (the preview groups by either)
        "strata": stratum_keys(project),
        "counts": selectors.decision_counts(project),
        "decisions": Paginator(
            selectors.decisions(project, status=status if status in STATUSES else None), DECISION_ROWS
        ).get_page(request.GET.get("page")),
        "decisions_query": urlencode({"status": status}) if status in STATUSES else "",
        "status_filter": status,
        "exports": Export.objects.filter(project=project)[:20],
        "formats": export_formats.choices(),
        "contents": Export.Content.choices,
        "scopes": Export.Scope.choices,
        **extra,
    }


@login_required
def curation_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    return render(request, "curation/page.html", _context(project, request))


@login_required
@require_POST
def preview(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    try:
        result = services.preview_policy(
            project=project, raw=_policy_from_form(request.POST, project), by=request.POST.get("by") or None
        )
        return render(request, "curation/_preview.html", {"preview": result})
    except DomainError as exc:
        return render(request, "curation/_preview.html", {"error": exc.message}, status=400)


@login_required
@require_POST
def save_policy(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    try:
        services.set_policy(project=project, raw=_policy_from_form(request.POST, project), user=request.user)
        if request.POST.get("apply"):
            report = services.apply_policy(
                project=project, user=request.user, override_manual=bool(request.POST.get("override_manual"))
            )
            messages.success(request, applied_message(report))
        else:
            messages.success(request, _("Policy saved."))
    except DomainError as exc:
        return render(
            request,
            "curation/page.html",
            _context(
                project, request, error=exc.message, policy=_policy_from_form(request.POST, project, strict=False)
            ),
            status=400,
        )
    return redirect("curation", project_id=project.id)


@login_required
@require_POST
def override(request: HttpRequest, project_id: int, item_id: int) -> HttpResponse:
    project = _project(request, project_id)
    item = get_object_or_404(Item, pk=item_id, project=project)
    try:
        services.override_decision(
            item=item, user=request.user, status=request.POST.get("status", ""), note=request.POST.get("note", "")
        )
        messages.success(request, override_message(item, request.POST.get("status", "")))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("curation", project_id=project.id)


@login_required
@require_POST
def import_revisions(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    data = request.FILES.get("data")
    if data is None:
        messages.error(request, _("choose a JSONL file of revised items"))
        return redirect("curation", project_id=project.id)
    images = request.FILES.get("images")
    try:
        report = services.import_revision_upload(
            project=project,
            data_stream=data.chunks(),
            images_name=images.name if images else None,
            images_stream=images.chunks() if images else None,
        )
    except DomainError as exc:
        messages.error(request, _("Nothing imported: %(why)s") % {"why": exc.message})
        return redirect("curation", project_id=project.id)
    if report.ok:
        messages.success(request, _("%(n)s revised item(s) imported as new versions.") % {"n": report.items_created})
    else:
        messages.error(request, _("Nothing imported: %(why)s") % {"why": "; ".join(report.errors[:10])})
    return redirect("curation", project_id=project.id)


@login_required
@require_POST
def start_export(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    try:
        services.start_export(
            project=project,
            user=request.user,
            content=request.POST.get("content", ""),
            format=request.POST.get("format", ""),
            scope=request.POST.get("scope", "accepted"),
        )
        messages.success(request, _("Export started."))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("curation", project_id=project.id)


@login_required
def export_status(request: HttpRequest, project_id: int, export_id: int) -> HttpResponse:
    project = _project(request, project_id)
    export = reaper.check(get_object_or_404(Export, pk=export_id, project=project))  # worker died: say so
    return render(request, "curation/_export.html", {"project": project, "export": export})


@login_required
def download(request: HttpRequest, export_id: int, name: str | None = None) -> FileResponse:
    export = Export.objects.filter(pk=export_id, project__in=managed_projects(request.user).values("pk")).first()
    if export is None or export.status != Export.Status.DONE:
        raise Http404("no such export")
    name = name or main_file(export)
    path = file_path(export, name) if name else None
    if path is None:
        raise Http404("no such file")
    return FileResponse(
        open(path, "rb"), as_attachment=True, filename=Path(name).name, content_type=content_type(export, name)
    )
