"""What the active-sample page (``active_views``) shows and does: the form's choices (the
project's judges, the uncertainties the chosen judge offers, the fields it rated), the chosen
uncertainty's distribution (quartiles and an inline-SVG histogram), the draw of a first round
and of the next rounds, and the series drawn so far with their estimates."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from annotation.models import Project
from core.errors import DomainError
from judges import uncertainty as judge_uncertainty
from studies import active as active_design
from studies.models import Sample

from . import active, selectors, table_strings
from .active_forms import ActiveSampleForm, NextRoundForm
from .presentation import active_context


def _choices(project: Project, data: Any) -> dict[str, Any]:
    judges = judge_uncertainty.judge_raters(project)
    if not judges:
        return {"judges": [], "sources": [], "fields": [], "judge": None, "frame": None}
    raw = (data or {}).get("judge")
    judge = next((j for j in judges if str(j.id) == str(raw)), judges[0])
    frame = selectors.ratings_frame(project)
    column = active.judge_column(frame, {"name": judge.name, "rater": judge.id})
    fields = (
        [f for f in dict.fromkeys(frame.loc[frame["rater"] == column, "field"].tolist()) if "[*]" not in f]
        if column
        else []
    )
    return {
        "judges": judges,
        "sources": judge_uncertainty.sources(project, judge),  # stored with the sample as they are (English)
        "fields": fields,
        "judge": judge,
        "column": column,
        "frame": frame,
    }


def histogram_svg(summary: dict[str, Any], w: int = 300, h: int = 80) -> SafeString:
    bars = summary.get("histogram") or []
    if not bars:
        return SafeString("")
    top = max(b["count"] for b in bars) or 1
    bw = w / len(bars)
    rects = format_html_join(
        "",
        '<rect x="{}" y="{}" width="{}" height="{}" fill="#4a78b5"><title>{}–{}: {}</title></rect>',
        (
            (
                f"{k * bw + 1:.1f}",
                f"{h - h * b['count'] / top:.1f}",
                f"{bw - 2:.1f}",
                f"{h * b['count'] / top:.1f}",
                f"{b['low']:.3g}",
                f"{b['high']:.3g}",
                b["count"],
            )
            for k, b in enumerate(bars)
        ),
    )
    return format_html(
        '<svg class="histogram" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">{}</svg>',
        w,
        h,
        w,
        h,
        _("histogram of the uncertainty"),
        rects,
    )


def _form_values(c: dict[str, Any], data: Any) -> dict[str, Any]:
    """The chooser's values for an unbound form: the judge chosen, the source asked for where
    this judge offers it (else the first it offers: a default that exists), the field asked for
    where the judge rated it; the other inputs as typed."""
    keys = [k for k, _ in c["sources"]]
    values: dict[str, Any] = {k: v for k, v in (data or {}).items() if k in ActiveSampleForm.base_fields}
    values["judge"] = c["judge"].id if c["judge"] else None
    if values.get("source") not in keys:
        values["source"] = keys[0] if keys else None
    if values.get("field") not in c["fields"]:
        values["field"] = c["fields"][0] if c["fields"] else None
    return values


def page_context(project: Project, data: Any, *, show: bool = False, bound: bool = False) -> dict[str, Any]:
    """The page's context. ``show``: compute the chosen uncertainty's distribution; ``bound``:
    the form is bound to ``data`` (a refused draw shows its errors), else prefilled with it. A
    refusal met while computing (an uncertainty with nothing to read, estimates the statistics
    refuse) goes to ``refusal`` instead of being raised: the page that shows an error must not
    fail on the same error."""
    c = _choices(project, data)
    sources = [(key, table_strings.translate(label)) for key, label in c["sources"]]
    values = _form_values(c, data)
    form = ActiveSampleForm(
        data if bound else None,
        judges=c["judges"],
        sources=sources,
        fields=c["fields"],
        initial=values,
    )
    refusal = ""
    distribution = None
    if show and c["judge"] is not None:
        source = values["source"]
        if data and data.get("source") and data.get("source") != source:
            refusal = _("this judge does not offer that uncertainty: choose one of the list")
        else:
            try:
                u = judge_uncertainty.item_uncertainty(project, c["judge"], source, values.get("field") or "")
            except DomainError as exc:
                refusal = table_strings.translate(exc.message)
            else:
                distribution = active_design.describe(list(u.values()))
                distribution["source"] = dict(sources)[source]
                distribution["svg"] = histogram_svg(distribution)
    missing = (
        [
            {"label": table_strings.translate(label), "reason": table_strings.translate(reason)}
            for label, reason in judge_uncertainty.missing_sources(project, c["judge"])
        ]
        if c["judge"] is not None
        else []
    )
    series: list[dict[str, Any]] = []
    if active_design.project_series(project):
        try:
            series = active.estimates(project, c["frame"])["series"]
        except DomainError as exc:
            refusal = refusal or table_strings.translate(exc.message)
    for s in series:
        # one form per series, each with ids of its own (the page holds them all)
        s["next_form"] = NextRoundForm(auto_id=f"id_round_{s['sample']}_%s")
    return {
        "form": form,
        "distribution": distribution,
        "missing_sources": missing,
        "refusal": refusal,
        "series": series,
        "active": active_context({"series": series}),
        "has_judges": bool(c["judges"]),
    }


def draw_from_form(project: Project, data: Any, user: AbstractBaseUser | None) -> Sample:
    c = _choices(project, data)
    form = ActiveSampleForm(data, judges=c["judges"], sources=c["sources"], fields=c["fields"])
    if not form.is_valid():
        raise DomainError(
            "; ".join(f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v) for k, v in form.errors.items())
        )
    d = form.cleaned_data
    judge = c["judge"]
    u = judge_uncertainty.item_uncertainty(project, judge, d["source"], d["field"])
    budget = d.get("budget")
    if not budget:
        rv = d.get("residual_variance")
        if rv is None:
            rv = active.residual_variance(c["frame"], c["column"], d["field"]) if c["column"] else None
            if not rv:
                raise DomainError(
                    _(
                        "no item has both a human rating and the judge's for this field: give the judge's "
                        "residual variance"
                    )
                )
    try:  # the statistics refuse some inputs (e.g. an uncertainty that is zero everywhere)
        if not budget:
            ids, _missing = active_design.population_ids(project, u)
            budget = active_design.budget_for_half_width([u[i] for i in ids], rv, d["target_half_width"])
        return active_design.draw_active_sample(
            project=project,
            uncertainty=u,
            budget=budget,
            judge={"rater": judge.id, "name": judge.name},
            field=d["field"],
            source=dict(c["sources"])[d["source"]] + (f" ({d['field']})" if d["source"] == "passes" else ""),
            name=d.get("name") or "",
            tau=d["tau"],
            floor=d["floor"],
            seed=d["seed"],
            rounds=d["rounds"],
            target_half_width=d.get("target_half_width") if d["rounds"] > 1 else None,
            created_by=user,
        )
    except ValueError as exc:
        raise DomainError(str(exc)) from exc


def next_round(first: Sample, *, refit: bool, user: AbstractBaseUser | None) -> Sample:
    u, source = active.refitted_uncertainty(first) if refit else active.prior_uncertainty(first)
    return active_design.draw_next_round(first=first, uncertainty=u, source=source, created_by=user)
