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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from annotation.access import managed_project_or_403
from annotation.models import Project
from benchmarks.registry import named_templates
from core import reaper
from core.errors import DomainError
from core.pages import form_error
from core.values import loads
from studies.models import Sample

from . import bias, capabilities, endpoints, imported, selectors
from . import forms as param_forms
from . import params as judge_params
from .administration import delete_blockers, delete_judge, set_judge_hidden, set_judge_prices, set_judge_short_label
from .backends.base import ENSEMBLE, PROMPTED
from .configuration import create_judge_config
from .models import JudgeConfig
from .registry import BACKENDS, backend_choices, is_ensemble
from .runs import cancel_judge_run, parse_stratum, rerun_failed_items, start_judge_run


def _project_or_403(request: HttpRequest, project_id: int) -> Project:
    return managed_project_or_403(request.user, project_id)


def _run_or_403(request: HttpRequest, project_id: int, run_id: int):
    project = _project_or_403(request, project_id)
    run = selectors.managed_run(request.user, run_id)
    if run is None or run.project_id != project.id:
        raise Http404("no such run")
    return run


class JudgeConfigForm(forms.Form):
    """A new judge. Its parameters are fields per backend (``judges/forms.py``, declared in
    ``judges/params.py``); the raw JSON (``params``) is the advanced way, merged with them."""

    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))
    short_label = forms.CharField(
        max_length=32,
        required=False,
        label=gettext_lazy("Short label"),
        help_text=gettext_lazy("what tables and the agreement page call the judge, e.g. GPT-4o; empty = from the name"),
    )
    # the registry's backends, read when the form is made (a callable: ``judges/registry.py``)
    backend = forms.ChoiceField(choices=backend_choices, label=gettext_lazy("Backend"))
    model_id = forms.CharField(
        max_length=300,
        required=False,
        label=gettext_lazy("Model id"),
        help_text=gettext_lazy("empty = the backend's default"),
    )
    parser = forms.ChoiceField(
        choices=[("", gettext_lazy("preset default")), *JudgeConfig.Parser.choices],
        required=False,
        label=gettext_lazy("Parser"),
    )
    template = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Template"),
        choices=lambda: [
            ("", _("preset default (the paper's prompt, else the rubric prompt)")),
            *((name, _(named.label)) for name, named in named_templates().items()),
        ],
    )
    questions = forms.CharField(
        required=False,
        label=gettext_lazy("Questions"),
        help_text=gettext_lazy("comma-separated question ids; empty = preset default"),
    )
    passes = forms.IntegerField(min_value=1, max_value=20, initial=1, label=gettext_lazy("Passes"))
    both_orders = forms.BooleanField(
        required=False,
        label=gettext_lazy("Both orders"),
        help_text=gettext_lazy("also judge each pair swapped: position consistency and first-position rate"),
    )
    combine = forms.ChoiceField(choices=JudgeConfig.Combine.choices, label=gettext_lazy("Combine"))
    params = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        initial="{}",
        label=gettext_lazy("Parameters as JSON (advanced)"),
        help_text=gettext_lazy(
            "Merged with the fields above: any parameter, including ones without a field. "
            'E.g. {"base_url": "http://127.0.0.1:8000/v1", "temperature": 0}'
        ),
    )
    members = forms.ModelMultipleChoiceField(
        queryset=JudgeConfig.objects.none(), required=False, label=gettext_lazy("Members")
    )
    price_prompt_per_1m = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=6,
        label=gettext_lazy("Price per 1M prompt tokens"),
        help_text=gettext_lazy("optional, with the completion price: runs then show an estimated cost"),
    )
    price_completion_per_1m = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=6,
        label=gettext_lazy("Price per 1M completion tokens"),
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        preset = project.preset
        self.image_fields = preset.image_fields()
        self.fields.update(param_forms.build_fields(self.image_fields))
        self.fields["members"].queryset = JudgeConfig.objects.filter(project=project).exclude(
            backend__in=[key for key in BACKENDS if is_ensemble(key)]
        )
        if preset.pair_order is None:  # offered for pairwise protocols only
            del self.fields["both_orders"]
        # the preset's own templates first: the others fit other protocols' items
        # (their labels are marked in the presets and translated here, where they are shown)
        mine = [(n, _(t.label)) for n, t in preset.named_templates.items()]
        others = [(n, _(t.label)) for n, t in named_templates().items() if n not in preset.named_templates]
        self.fields["template"].choices = [
            ("", _("preset default (the paper's prompt, else the rubric prompt)")),
            *([(_("This preset's templates"), mine)] if mine else []),
            *([(_("Other presets' templates"), others)] if others else []),
        ]
        self.param_fields: dict[str, str] = {}  # param -> its field, for the chosen backend
        self.from_fields: set[str] = set()  # the params set in fields (not in the JSON)

    def clean_params(self):
        raw = self.cleaned_data.get("params") or "{}"
        try:
            value = loads(raw)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                _("not JSON: %(why)s (line %(line)s, column %(col)s)")
                % {"why": exc.msg, "line": exc.lineno, "col": exc.colno}
            ) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(_("params must be a JSON object"))
        return value

    def clean(self):
        """The chosen backend's fields merged with the JSON, checked as the service checks them
        (``judges/params.py``), each problem on its field; other backends' fields are ignored."""
        data = super().clean()
        backend = data.get("backend")
        mine = param_forms.PREFIX + "-" + str(backend) + "-"
        for name in list(self.errors):  # a value typed in another backend's section is not used
            if name.startswith(param_forms.PREFIX + "-") and not name.startswith(mine):
                del self.errors[name]
        if not backend or "params" in self.errors or any(n.startswith(mine) for n in self.errors):
            return data
        values, self.param_fields, errors = param_forms.collect(data, backend)
        for name, message in errors.items():
            self.add_error(name, message)
        raw = data.get("params") or {}
        for key, value in values.items():
            if key in raw and raw[key] != value:
                self.add_error(
                    "params",
                    _("params.%(name)s is set in its field (%(field)s) and in the JSON (%(json)s): keep one")
                    % {"name": key, "field": judge_params.show_value(value), "json": judge_params.show_value(raw[key])},
                )
        if self.errors:
            return data
        self.from_fields = set(values)
        merged = {**raw, **values}
        try:
            BACKENDS[backend].check_declared(merged, image_fields=self.image_fields)
        except judge_params.ParamError as exc:
            self.add_param_errors(exc.errors)
        data["params"] = merged
        return data

    def add_param_errors(self, errors: dict[str, str] | list[str]) -> None:
        """Each parameter's problem on its field when it was set there, else on the JSON."""
        if not isinstance(errors, dict):
            return
        for name, message in errors.items():
            field = self.param_fields.get(name)
            self.add_error(field if name in self.from_fields and field in self.fields else "params", message)


@login_required
def judges_page(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project_or_403(request, project_id)
    form = JudgeConfigForm(request.POST or None, project=project)
    if request.method != "POST":
        return _page(request, project, form=form)
    if form.is_valid():
        d = form.cleaned_data
        questions = [q.strip() for q in d["questions"].split(",") if q.strip()] or None
        try:
            config = create_judge_config(
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
                price_prompt_per_1m=d.get("price_prompt_per_1m"),
                price_completion_per_1m=d.get("price_completion_per_1m"),
                short_label=d["short_label"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
            form.add_param_errors(exc.errors)
        else:
            messages.success(request, _("Judge %(name)r created.") % {"name": config.name})
            unread = BACKENDS[config.backend].undeclared(config.params)
            if unread:  # kept as given (the API always took any object), but likely a typo
                messages.warning(
                    request,
                    _("Not read by the %(backend)s backend, so without effect: %(names)s.")
                    % {"backend": config.backend, "names": ", ".join(unread)},
                )
            return redirect("judges", project_id=project.id)
    return _page(request, project, form=form, status=400)


class ImportOutputsForm(forms.Form):
    """Outputs of a judge or metric run elsewhere (see ``judges/imported.py`` for the format)."""

    file = forms.FileField(
        label=gettext_lazy("File"),
        help_text=gettext_lazy("JSONL or CSV: one line per item, keyed by the item's external id 'id'"),
    )
    name = forms.CharField(max_length=150, label=gettext_lazy("Name"))
    model_id = forms.CharField(max_length=200, required=False, label=gettext_lazy("Model id"))
    method = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        label=gettext_lazy("Method"),
        help_text=gettext_lazy("prompt or method description"),
    )
    metrics = forms.CharField(
        required=False,
        label=gettext_lazy("Metrics"),
        help_text=gettext_lazy("comma-separated names of numeric score columns (e.g. clip), besides the rubric"),
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
    configs = list(selectors.judge_configs(project))
    form = form or JudgeConfigForm(project=project)
    preset_modes = {b: d.mode for b, d in project.preset.direct_judges.items()}
    return render(
        request,
        "judges/judges.html",
        {
            "project": project,
            "form": form,
            # the judge form's parts per backend, with what each can answer in this project
            "sections": param_forms.sections(form, capabilities.backend_capabilities(project), preset_modes),
            # the fieldsets of the prompt (LLM / VLM backends) and of the members (ensembles)
            "prompt_backends": param_forms.backends_of(PROMPTED),
            "ensemble_backends": param_forms.backends_of(ENSEMBLE),
            "suggestions": {
                "endpoint": param_forms.endpoint_suggestions(),
                "key_env": param_forms.key_name_suggestions(),
                "device": ["cpu", "cuda", "cuda:0"],
            },
            "allowed_hosts": endpoints.allowed_hosts(),
            "allowed_keys": endpoints.allowed_key_names(),
            "import_form": import_form or ImportOutputsForm(),
            "import_errors": import_errors or [],
            "configs": [c for c in configs if not c.hidden],
            "hidden_configs": [c for c in configs if c.hidden],
            "samples": list(Sample.objects.filter(project=project).order_by("-created_at").values_list("id", "name")),
            "imported": imported.imported_raters(project),
            **_imports_context(project),
            # a hidden judge's runs are on its own page, not here
            "runs": [(r, selectors.run_progress(r)) for r in selectors.judge_runs(project, include_hidden=False)[:50]],
        },
        status=status,
    )


def _imports_context(project: Project) -> dict[str, object]:
    """The latest imports of judge outputs: how far a large file's is, why one failed (one whose
    worker died shown re-queued or failed, never running for ever)."""
    latest = [reaper.check(j) if j.is_pending else j for j in imported.judge_imports(project)]
    return {"judge_imports": latest, "imports_pending": any(j.is_pending for j in latest)}


@login_required
def judge_imports(request: HttpRequest, project_id: int) -> HttpResponse:
    """The judges page's table of imports of judge outputs, which polls it while one runs."""
    project = _project_or_403(request, project_id)
    context = _imports_context(project)
    response = render(request, "judges/_imports.html", {"project": project, **context})
    if request.headers.get("HX-Request") and not context["imports_pending"]:
        response["HX-Refresh"] = "true"  # the imported judge's row and reports appear without a manual reload
    return response


@login_required
@require_POST
def import_outputs(request: HttpRequest, project_id: int) -> HttpResponse:
    """Import a judge's outputs as a model rater: all or nothing, problems listed by line."""
    project = _project_or_403(request, project_id)
    form = ImportOutputsForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, project, import_form=form, status=400)
    d = form.cleaned_data
    try:
        job = imported.import_upload(project=project, upload=d["file"], fields=d, user=request.user)
    except DomainError as exc:
        form_error(form, exc)
        return _page(request, project, import_form=form, status=400)
    report = imported.JudgeImportReport.of(job)
    if job.is_pending:  # a large file: a worker imports it, the page's table shows how far
        messages.info(
            request,
            _("Import %(job)d of judge %(name)r is queued: its progress is shown below.")
            % {"job": job.id, "name": job.name},
        )
    elif not report.ok:
        more = [_("... and %(n)d more") % {"n": report.errors_truncated}] if report.errors_truncated else []
        return _page(request, project, import_form=form, import_errors=report.errors + more, status=400)
    elif report.duplicate_of is not None:
        messages.info(
            request,
            _("This file was imported already (import %(job)d, judge %(name)r): nothing was added.")
            % {"job": report.duplicate_of, "name": report.name},
        )
    else:
        messages.success(
            request,
            ngettext(
                "Imported %(n)d output as judge %(name)r.", "Imported %(n)d outputs as judge %(name)r.", report.items
            )
            % {"n": report.items, "name": report.name},
        )
    return redirect("judges", project_id=project.id)


class StartRunForm(forms.Form):
    """What a run covers: all items, a design sample and / or a stratum, then a random subset."""

    sample_size = forms.IntegerField(required=False, min_value=1, label=gettext_lazy("sample size"))
    sample = forms.IntegerField(required=False, min_value=1, label=gettext_lazy("design sample"))
    stratum = forms.CharField(required=False, max_length=2000, label=gettext_lazy("stratum"))

    def clean_stratum(self) -> dict[str, str]:
        try:
            return parse_stratum(self.cleaned_data.get("stratum") or "")
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from None


@login_required
@require_POST
def start_run(request: HttpRequest, project_id: int, config_id: int) -> HttpResponse:
    project = _project_or_403(request, project_id)
    config = get_object_or_404(JudgeConfig, pk=config_id, project=project)
    form = StartRunForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{form.fields[f].label}: {m}" for f, ms in form.errors.items() for m in ms))
        return redirect("judges", project_id=project.id)
    d = form.cleaned_data
    try:
        run = start_judge_run(
            config=config,
            user=request.user,
            sample_size=d["sample_size"],
            sample_id=d["sample"],
            stratum=d["stratum"] or None,
        )
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("judges", project_id=project.id)
    return redirect("judge_run", project_id=project.id, run_id=run.id)


class PricesForm(forms.Form):
    price_prompt_per_1m = forms.DecimalField(
        required=False, min_value=0, max_digits=12, decimal_places=6, label=gettext_lazy("Price per 1M prompt tokens")
    )
    price_completion_per_1m = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=6,
        label=gettext_lazy("Price per 1M completion tokens"),
    )


def _judge_page(request: HttpRequest, project: Project, config: JudgeConfig, form: forms.Form, status: int = 200):
    runs = list(config.runs.order_by("-created_at")[:100])
    return render(
        request,
        "judges/judge.html",
        {
            "project": project,
            "config": config,
            "form": form,
            "runs": [(r, selectors.run_progress(r), selectors.run_usage(r)) for r in runs],
            "blockers": delete_blockers(config),
            "param_rows": capabilities.parameter_rows(config),
            "decides": capabilities.judge_decides(config),
        },
        status=status,
    )


@login_required
def judge_detail(request: HttpRequest, project_id: int, config_id: int) -> HttpResponse:
    """One judge: its settings, its runs with tokens and estimated cost; the prices are set here."""
    project = _project_or_403(request, project_id)
    config = get_object_or_404(JudgeConfig.objects.select_related("rater"), pk=config_id, project=project)
    if request.method != "POST":
        initial = {
            "price_prompt_per_1m": config.price_prompt_per_1m,
            "price_completion_per_1m": config.price_completion_per_1m,
        }
        return _judge_page(request, project, config, PricesForm(initial=initial))
    form = PricesForm(request.POST)
    if form.is_valid():
        try:
            set_judge_prices(
                config=config,
                prompt=form.cleaned_data["price_prompt_per_1m"],
                completion=form.cleaned_data["price_completion_per_1m"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _("Prices saved."))
            return redirect("judge_detail", project_id=project.id, config_id=config.id)
    return _judge_page(request, project, config, form, status=400)


@login_required
@require_POST
def judge_short_label(request: HttpRequest, project_id: int, config_id: int) -> HttpResponse:
    """Set the judge's short label (``short_label``), what tables and pages call it."""
    project = _project_or_403(request, project_id)
    config = get_object_or_404(JudgeConfig, pk=config_id, project=project)
    try:
        set_judge_short_label(config=config, label=request.POST.get("short_label", ""))
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Short label saved: %(label)s.") % {"label": config.short_label})
    return redirect("judge_detail", project_id=project.id, config_id=config.id)


@login_required
@require_POST
def judge_hide(request: HttpRequest, project_id: int, config_id: int) -> HttpResponse:
    """Hide the judge (``hidden=1``) or show it again (``hidden=0``)."""
    project = _project_or_403(request, project_id)
    config = get_object_or_404(JudgeConfig, pk=config_id, project=project)
    value = request.POST.get("hidden")
    if value not in ("0", "1"):
        messages.error(request, _("hidden is 1 (hide) or 0 (show)"))
        return redirect("judge_detail", project_id=project.id, config_id=config.id)
    set_judge_hidden(config=config, hidden=value == "1")
    messages.success(
        request,
        (
            _("Judge %(name)r hidden: it is left out of reports, curation and exports until shown again.")
            if config.hidden
            else _("Judge %(name)r shown again.")
        )
        % {"name": config.name},
    )
    return redirect("judge_detail", project_id=project.id, config_id=config.id)


@login_required
def judge_delete(request: HttpRequest, project_id: int, config_id: int) -> HttpResponse:
    """GET: what deleting the judge removes, and a confirmation; POST: delete it."""
    project = _project_or_403(request, project_id)
    config = get_object_or_404(JudgeConfig.objects.select_related("rater"), pk=config_id, project=project)
    if request.method == "POST":
        try:
            counts = delete_judge(config=config)
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("judge_detail", project_id=project.id, config_id=config.id)
        messages.success(
            request,
            _("Judge %(name)r deleted with %(runs)d run(s), %(outputs)d output(s) and %(ratings)d rating(s).")
            % {
                "name": config.name,
                "runs": counts["runs"],
                "outputs": counts["outputs"],
                "ratings": counts["annotations"],
            },
        )
        return redirect("judges", project_id=project.id)
    return render(
        request,
        "judges/delete.html",
        {
            "project": project,
            "config": config,
            "footprint": selectors.delete_footprint(config),
            "blockers": delete_blockers(config),
        },
    )


FAILURES_SHOWN = 200


@login_required
def run_detail(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    run = _run_or_403(request, project_id, run_id)
    errors_only = request.GET.get("failures") == "1"
    page = Paginator(selectors.run_outputs(run, errors_only=errors_only), 100).get_page(request.GET.get("page"))
    if request.GET.get("part") == "outputs":  # the answers part, polled while the run is pending
        context = {"project": run.project, "run": run, "outputs": page, "errors_only": errors_only}
        return render(request, "judges/_outputs.html", context)
    failures = selectors.run_failures(run)
    return render(
        request,
        "judges/run.html",
        {
            "project": run.project,
            "run": run,
            "progress": selectors.run_progress(run),
            "outputs": page,
            # the first FAILURES_SHOWN with their raw outputs; the page says when there are more
            # (every failed answer: the paginated answers list, failures only)
            "failures": failures[:FAILURES_SHOWN],
            "failures_total": failures.count(),
            "usage": selectors.run_usage(run),
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
        cancel_judge_run(run=run)
        messages.success(request, _("Run cancelled."))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("judge_run", project_id=project_id, run_id=run.id)


@login_required
@require_POST
def rerun_failed(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    run = _run_or_403(request, project_id, run_id)
    try:
        new = rerun_failed_items(run=run, user=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("judge_run", project_id=project_id, run_id=run.id)
    return redirect("judge_run", project_id=project_id, run_id=new.id)
