"""The item browser's pages: a project's items with search and filters (:mod:`curation.browse`),
and one item exactly as an annotator sees it, read-only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import urlencode

from annotation.access import as_id, managed_project_or_403
from annotation.models import Item
from annotation.presentation import item_render_context, question_blocks, rubric_wording, stimulus_blocks
from core.errors import DomainError

from . import browse

BROWSER_PAGE = 50


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
