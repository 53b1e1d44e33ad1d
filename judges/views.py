"""Judge pages (researchers of the project and admins only; anyone else gets 403, as on the
other management pages). Thin: parse, call one service or selector, render."""

from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.access import managed_project_or_403
from annotation.importing import format_of
from annotation.models import Project
from benchmarks.registry import named_templates
from core.errors import DomainError
from core.pages import form_error

from . import bias, imported, selectors, services
from .models import JudgeConfig


def _project_or_403(request: HttpRequest, project_id: int) -> Project:
    return managed_project_or_403(request.user, project_id)


def _run_or_403(request: HttpRequest, project_id: int, run_id: int):
    project = _project_or_403(request, project_id)
    run = selectors.managed_run(request.user, run_id)
    if run is None or run.project_id != project.id:
        raise Http404("no such run")
    return run


class JudgeConfigForm(forms.Form):
    name = forms.CharField(max_length=200)
    backend = forms.ChoiceField(choices=JudgeConfig.Backend.choices)
    model_id = forms.CharField(max_length=300, required=False, help_text="empty = the backend's default")
    parser = forms.ChoiceField(choices=[("", "preset default"), *JudgeConfig.Parser.choices], required=False)
    template = forms.ChoiceField(
        required=False,
        choices=lambda: [
            ("", "preset default (the paper's prompt, else the rubric prompt)"),
            *((name, named.label) for name, named in named_templates().items()),
        ],
    )
    questions = forms.CharField(required=False, help_text="comma-separated question ids; empty = preset default")
    passes = forms.IntegerField(min_value=1, max_value=20, initial=1)
    both_orders = forms.BooleanField(
        required=False,
        label="Both orders",
        help_text="also judge each pair swapped: position consistency and first-position rate",
    )
    combine = forms.ChoiceField(choices=JudgeConfig.Combine.choices)
    params = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        initial="{}",
        help_text='JSON, e.g. {"base_url": "http://127.0.0.1:8000/v1", "temperature": 0}',
    )
    members = forms.ModelMultipleChoiceField(queryset=JudgeConfig.objects.none(), required=False)

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["members"].queryset = JudgeConfig.objects.filter(project=project).exclude(backend="ensemble")
        if project.preset.pair_order is None:  # offered for pairwise protocols only
            del self.fields["both_orders"]

    def clean_params(self):
        raw = self.cleaned_data.get("params") or "{}"
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not JSON: {exc.msg}") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("params must be a JSON object")
        return value


@login_required
def judges_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project_or_403(request, project_id)
    form = JudgeConfigForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        questions = [q.strip() for q in d["questions"].split(",") if q.strip()] or None
        try:
            config = services.create_judge_config(
                project=project,
                name=d["name"],
                backend=d["backend"],
                model_id=d["model_id"],
                parser=d["parser"] or None,
                questions=questions,
                prompt_template={"use": d["template"]} if d.get("template") else None,
                params=d["params"],
                passes=d["passes"],
                combine=d["combine"],
                members=d["members"],
                both_orders=d.get("both_orders", False),
                created_by=request.user,
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Judge {config.name!r} created.")
            return redirect("judges", project_id=project.id)
    return _page(request, project, form=form)


class ImportOutputsForm(forms.Form):
    """Outputs of a judge or metric run elsewhere (see ``judges/imported.py`` for the format)."""

    file = forms.FileField(help_text="JSONL or CSV: one line per item, keyed by the item's external id 'id'")
    name = forms.CharField(max_length=150)
    model_id = forms.CharField(max_length=200, required=False)
    method = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, help_text="prompt or method description"
    )
    metrics = forms.CharField(
        required=False, help_text="comma-separated names of numeric score columns (e.g. clip), besides the rubric"
    )


def _page(
    request: HttpRequest,
    project: Project,
    *,
    form: forms.Form | None = None,
    import_form: forms.Form | None = None,
    import_errors: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "judges/judges.html",
        {
            "project": project,
            "form": form or JudgeConfigForm(project=project),
            "import_form": import_form or ImportOutputsForm(),
            "import_errors": import_errors or [],
            "configs": selectors.judge_configs(project),
            "imported": imported.imported_raters(project),
            "runs": [(r, selectors.run_progress(r)) for r in selectors.judge_runs(project)[:50]],
        },
        status=status,
    )


@login_required
@require_POST
def import_outputs(request: HttpRequest, project_id: int) -> HttpResponse:
    """Import a judge's outputs as a model rater: all or nothing, problems listed by line."""
    project = _project_or_403(request, project_id)
    form = ImportOutputsForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, project, import_form=form, status=400)
    d = form.cleaned_data
    upload = d["file"]
    fmt = format_of(upload.name) or "jsonl"
    try:
        report = imported.import_judge_outputs(
            project=project,
            data=upload.read(),
            data_format=fmt,
            name=d["name"],
            model_id=d["model_id"],
            method=d["method"],
            metrics=imported.metric_names(d["metrics"]),
            source_file=upload.name,
            user=request.user,
        )
    except DomainError as exc:
        form_error(form, exc)
        return _page(request, project, import_form=form, status=400)
    if not report.ok:
        more = [f"... and {report.errors_truncated} more"] if report.errors_truncated else []
        return _page(request, project, import_form=form, import_errors=report.errors + more, status=400)
    messages.success(request, f"Imported {report.items} outputs as judge {report.name!r}.")
    return redirect("judges", project_id=project.id)


@login_required
@require_POST
def start_run(request: HttpRequest, project_id: int, config_id: int) -> HttpResponse:
    project = _project_or_403(request, project_id)
    config = get_object_or_404(JudgeConfig, pk=config_id, project=project)
    sample = request.POST.get("sample_size", "").strip()
    try:
        run = services.start_judge_run(config=config, user=request.user, sample_size=int(sample) if sample else None)
    except (DomainError, ValueError) as exc:
        messages.error(request, getattr(exc, "message", "sample size must be a whole number"))
        return redirect("judges", project_id=project.id)
    return redirect("judge_run", project_id=project.id, run_id=run.id)


@login_required
def run_detail(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    run = _run_or_403(request, project_id, run_id)
    errors_only = request.GET.get("failures") == "1"
    page = Paginator(selectors.run_outputs(run, errors_only=errors_only), 100).get_page(request.GET.get("page"))
    return render(
        request,
        "judges/run.html",
        {
            "project": run.project,
            "run": run,
            "progress": selectors.run_progress(run),
            "outputs": page,
            "failures": selectors.run_failures(run)[:200],
            "errors_only": errors_only,
            "label_counts": selectors.run_label_counts(run),
            "bias": bias.run_bias_checks(run),
        },
    )


@login_required
def run_progress(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    run = _run_or_403(request, project_id, run_id)
    response = render(
        request,
        "judges/_progress.html",
        {
            "project": run.project,
            "run": run,
            "progress": selectors.run_progress(run),
        },
    )
    if request.headers.get("HX-Request") and not run.is_pending:
        # the run page polled this while the run was active: reload it whole, so its answers,
        # failures and the re-run button appear without the researcher reloading by hand
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def cancel_run(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    run = _run_or_403(request, project_id, run_id)
    try:
        services.cancel_judge_run(run=run)
        messages.success(request, "Run cancelled.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("judge_run", project_id=project_id, run_id=run.id)


@login_required
@require_POST
def rerun_failed(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    run = _run_or_403(request, project_id, run_id)
    try:
        new = services.rerun_failed_items(run=run, user=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("judge_run", project_id=project_id, run_id=run.id)
    return redirect("judge_run", project_id=project_id, run_id=new.id)
