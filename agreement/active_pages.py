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
from .active_forms import ActiveSampleForm
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


def page_context(project: Project, data: Any) -> dict[str, Any]:
    c = _choices(project, data)
    form = ActiveSampleForm(
        data if data and "source" in data else None,
        judges=c["judges"],
        sources=[(key, table_strings.translate(label)) for key, label in c["sources"]],
        fields=c["fields"],
        initial={"judge": c["judge"].id if c["judge"] else None},
    )
    distribution = None
    if c["judge"] is not None and data and data.get("source"):
        source = data.get("source")
        if source in dict(c["sources"]):
            u = judge_uncertainty.item_uncertainty(project, c["judge"], source, data.get("field") or "")
            distribution = active_design.describe(list(u.values()))
            distribution["source"] = table_strings.translate(dict(c["sources"])[source])
            distribution["svg"] = histogram_svg(distribution)
    frame = c["frame"]
    series = []
    if active_design.project_series(project):
        est = active.estimates(project, frame)
        for s in est["series"]:
            series.append(s)
    return {
        "form": form,
        "distribution": distribution,
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


def next_round(first: Sample, *, refit: bool, user: AbstractBaseUser | None) -> Sample:
    u, source = active.refitted_uncertainty(first) if refit else active.prior_uncertainty(first)
    return active_design.draw_next_round(first=first, uncertainty=u, source=source, created_by=user)
