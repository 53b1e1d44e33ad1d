"""The project page that imports human annotations made in another tool: upload -> preview (the
mapping of source fields to rubric questions, the counts, every problem; the mapping can be
edited and previewed again) -> confirm, which runs the import as a job whose page shows its
progress. Thin: parse, call ``annotation.annotation_import``, render. Researchers and admins of
the project only (``annotation.access``)."""

from __future__ import annotations

import json
from pathlib import Path

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core import reaper
from core.errors import DomainError

from . import annotation_import
from .access import as_id, managed_project_or_403
from .models import AnnotationImport
from .sources import registry

#: the readers of people's ratings, read from the registry when a form is made (a callable)
FORMAT_CHOICES = registry.human_choices


class UploadForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("File"))
    format = forms.ChoiceField(label=gettext_lazy("Format"), choices=FORMAT_CHOICES)
    item_key = forms.CharField(
        label=gettext_lazy("Item key"),
        initial="id",
        max_length=200,
        help_text=gettext_lazy(
            "The key of the task's data that names the item (e.g. pair_id), matched against the items' external "
            "ids first, then against an item field of that name. Left at id, it is found in the file when one "
            "key of the tasks' data names this project's items."
        ),
    )
    mapping = forms.CharField(
        label=gettext_lazy("Mapping"), required=False, widget=forms.Textarea(attrs={"rows": 3}), max_length=20_000
    )


class StagedForm(forms.Form):
    token = forms.CharField(max_length=24)
    format = forms.ChoiceField(choices=FORMAT_CHOICES)
    item_key = forms.CharField(max_length=200)
    mapping = forms.CharField(required=False, max_length=20_000)


def _mapping_rows(project, report) -> list[tuple[str, str | None, list[list[str]]]]:
    """One row per source field: the question it answers and examples of how its values are read
    (in the file, stored, the option's label in the page's language: the rubric's own translation)."""
    rubric = project.rubric_version.parsed()
    questions = {q.id: q for q in rubric.localized(rubric.pick_locale(get_language())).questions}
    rows = []
    for source, question in (report.mapping or {}).items():
        q = questions.get(question or "")
        labels = (
            {str(o.value) if isinstance(o.value, str) else json.dumps(o.value): o.label for o in q.options} if q else {}
        )
        examples = [
            [raw, value, labels.get(value, label)]
            for raw, value, label in (report.value_examples or {}).get(source, [])
        ]
        rows.append((source, question, examples))
    return rows


def _page(request, project, *, form=None, report=None, staged=None, error=None, status=200) -> HttpResponse:
    return render(
        request,
        "annotation/annotation_import.html",
        {
            "project": project,
            "form": form or UploadForm(),
            "report": report,
            "mapping_rows": _mapping_rows(project, report) if report else [],
            "staged": staged,
            "error": error,
            "imports": annotation_import.imports_of(project),
            "questions": [q.id for q in project.rubric_version.parsed().questions],
        },
        status=status,
    )


@login_required
def annotation_imports(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    return _page(request, project)


@login_required
@require_POST
def annotation_import_preview(request: HttpRequest, project_id: int) -> HttpResponse:
    """Upload (or, with a staged token, the mapping edited) -> the preview; nothing written."""
    project = managed_project_or_403(request.user, project_id)
    try:
        if "token" in request.POST:
            form = StagedForm(request.POST)
            if not form.is_valid():
                raise DomainError("the upload is gone: upload the file again")
            path, name = annotation_import.staged_annotations(
                project=project, user=request.user, token=form.cleaned_data["token"]
            )
            token = form.cleaned_data["token"]
        else:
            form = UploadForm(request.POST, request.FILES)
            if not form.is_valid():
                return _page(request, project, form=form, status=400)
            upload = form.cleaned_data["file"]
            staged = annotation_import.stage_annotations(
                project=project,
                user=request.user,
                name=upload.name,
                chunks=upload.chunks(),
                data_format=form.cleaned_data["format"],
            )
            path, name, token = staged.path, upload.name, staged.token
        data = form.cleaned_data
        mapping = annotation_import.parse_mapping(data.get("mapping") or "")
        preview = annotation_import.preview_annotations(
            project=project,
            user=request.user,
            path=path,
            original_name=name,
            data_format=data["format"],
            item_key=data["item_key"],
            mapping=mapping,
            keeps_upload=True,  # for Confirm
        )
        if isinstance(preview, AnnotationImport):
            # a large file is previewed on a worker (issue 37, M3): its page shows the progress,
            # then this preview
            return redirect("annotation_import_detail", job_id=preview.id)
    except DomainError as exc:
        return _page(request, project, error=exc.message, status=400)
    return _page(request, project, report=preview, staged=_staged(token, name, data["format"], preview, mapping))


def _staged(token: str, name: str, data_format: str, report, mapping) -> dict[str, str]:
    """What the preview's forms post back (Confirm, or the mapping edited and previewed again)."""
    return {
        "token": token,
        "name": name,
        "format": data_format,
        "item_key": report.item_key,  # the key detected from the file, when it was
        "mapping": "\n".join(f"{k}={v}" for k, v in mapping.items()),
    }


def _preview_page(request: HttpRequest, job: AnnotationImport) -> HttpResponse:
    """An ended preview job shown as the preview an inline one is, its forms posting the staged
    upload while it is there for this user (the uploader's: a staged file is its uploader's)."""
    report = annotation_import.preview_of(job)
    project = job.project
    token = Path(job.data_file).parent.name
    try:
        annotation_import.staged_annotations(project=project, user=request.user, token=token)
    except DomainError:
        return _page(
            request,
            project,
            report=report,
            error=_("The uploaded file is gone, or someone else uploaded it: upload it to import it."),
        )
    return _page(
        request, project, report=report, staged=_staged(token, job.original_name, job.data_format, report, job.mapping)
    )


@login_required
@require_POST
def annotation_import_confirm(request: HttpRequest, project_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    form = StagedForm(request.POST)
    try:
        if not form.is_valid():
            raise DomainError("the upload is gone: upload the file again")
        data = form.cleaned_data
        path, name = annotation_import.staged_annotations(project=project, user=request.user, token=data["token"])
        job = annotation_import.start_annotation_import(
            project=project,
            user=request.user,
            path=path,
            original_name=name,
            data_format=data["format"],
            item_key=data["item_key"],
            mapping=annotation_import.parse_mapping(data.get("mapping") or ""),
        )
    except DomainError as exc:
        return _page(request, project, error=exc.message, status=400)
    return redirect("annotation_import_detail", job_id=job.id)


@login_required
def annotation_import_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(AnnotationImport.objects.select_related("project"), pk=as_id(job_id))
    managed_project_or_403(request.user, job.project_id)
    reaper.check(job)  # a job whose worker died is shown re-queued or failed, never running for ever
    if job.preview and job.status == AnnotationImport.Status.DONE:
        if request.headers.get("HX-Request"):  # the polled status: the whole page shows the preview
            response = HttpResponse(status=204)
            response["HX-Refresh"] = "true"
            return response
        return _preview_page(request, job)
    template = (
        "annotation/_annotation_import_status.html"
        if request.headers.get("HX-Request")
        else "annotation/annotation_import_detail.html"
    )
    return render(request, template, {"job": job, "project": job.project})
