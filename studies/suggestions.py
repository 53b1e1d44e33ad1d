"""The paper's study design as suggestions on the design pages: a preset's ``StudyDesign`` turned
into the initial values of the sample, plan and quality-control forms, and into the words of the
"Suggested by <paper>" lines. Nothing is applied until the researcher submits the form.

Pure: no ORM and no request. Plain functions from a design (``None`` where the preset has none)
and the project's facts the views read (its k per item, its QC settings and whether they are
its own) to dicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from benchmarks.base import STRATA_KEYS, StudyDesign, translated, without_file_names

from .rules import format_balance_text

#: what each form's summary is called in the whole design's sentence
FORM_LABELS = {
    "sample": gettext_lazy("sample"),
    "plan": gettext_lazy("assignment"),
    "qc": gettext_lazy("quality control"),
}
#: the allocation in words
ALLOCATION_WORDS = {"equal": gettext_lazy("equal allocation"), "proportional": gettext_lazy("proportional allocation")}


def design_summary(design: StudyDesign) -> dict[str, str]:
    """The paper's design in words, per form (``sample``, ``plan``, ``qc``; "" = nothing given) and
    ``all`` of it."""
    sample = []
    if design.sample_size:
        sample.append(ngettext("%(n)d item", "%(n)d items", design.sample_size) % {"n": design.sample_size})
    if design.sample_strata:
        sample.append(_("stratified by %(keys)s") % {"keys": " × ".join(design.sample_strata)})
    if design.sample_allocation:
        sample.append(str(ALLOCATION_WORDS.get(design.sample_allocation, design.sample_allocation)))
    plan = [f"k = {design.k}"] if design.k else []
    plan += [
        _("eligibility %(attribute)s = item %(key)s") % {"attribute": r["attribute"], "key": r["item_key"]}
        for r in design.eligibility
    ]
    if design.balance:
        plan.append(
            _("balance %(attribute)s %(quota)s")
            % {"attribute": design.balance["attribute"], "quota": format_balance_text(design.balance)}
        )
    if design.cap_per_annotator:
        plan.append(_("at most %(n)s items per annotator") % {"n": design.cap_per_annotator})
    qc = [f"{k.replace('_', ' ')} = {v}" for k, v in design.qc.items()]
    parts = {"sample": ", ".join(sample), "plan": ", ".join(plan), "qc": ", ".join(qc)}
    parts["all"] = "; ".join(f"{FORM_LABELS[k]} {v}" for k, v in parts.items() if v)
    return parts


def shown(design: StudyDesign) -> StudyDesign:
    """The design as the pages show it: where the paper says so (never its internal file, issue
    25) and the notes in the UI's language (the preset declares them in English)."""
    return replace(
        design, source=without_file_names(translated(design.source)), notes=tuple(translated(n) for n in design.notes)
    )


def suggestion(design: StudyDesign | None) -> dict[str, Any]:
    """Template context of the "Suggested by <paper>" lines: ``suggested`` and ``summary``."""
    if design is not None:
        design = shown(design)
    return {"suggested": design, "summary": design_summary(design) if design else {}}


def sample_initial(design: StudyDesign | None) -> dict[str, Any]:
    """The sample form's initial values: the paper's strata (the strata columns ticked, other keys
    as meta keys), size and allocation; equal allocation and seed 1 otherwise."""
    initial: dict[str, Any] = {"allocation": "equal", "seed": 1}
    if design is None:
        return initial
    initial["strata"] = [k for k in design.sample_strata if k in STRATA_KEYS]
    extra = [k for k in design.sample_strata if k not in STRATA_KEYS]
    if extra:
        initial["meta_keys"] = ", ".join(extra)
    if design.sample_size:
        initial["total_size"] = design.sample_size
    if design.sample_allocation:
        initial["allocation"] = design.sample_allocation
    return initial


def plan_initial(design: StudyDesign | None, k_per_item: int) -> dict[str, Any]:
    """The plan form's initial values: the paper's k, first eligibility rule, balance quota and
    cap; the project's k per item otherwise."""
    initial: dict[str, Any] = {"k": k_per_item, "take_over": True}
    if design is None:
        return initial
    if design.k:
        initial["k"] = design.k
    if design.eligibility:  # the form takes one rule
        initial["eligibility_attribute"] = design.eligibility[0]["attribute"]
        initial["eligibility_item_key"] = design.eligibility[0]["item_key"]
    if design.balance:
        initial["balance_attribute"] = design.balance["attribute"]
        initial["balance_quota"] = format_balance_text(design.balance)
    if design.cap_per_annotator:
        initial["cap_per_annotator"] = design.cap_per_annotator
    return initial


def qc_suggestion(design: StudyDesign | None, settings: Mapping[str, Any], *, qc_enabled: bool) -> dict[str, Any]:
    """The dashboard's QC form context: ``qc_initial`` (the project's settings, ``settings``, with
    the paper's QC over them), ``qc_suggested`` (the design, or None) and ``qc_summary``. The
    paper's QC is suggested only until the project has QC settings of its own (``qc_enabled``):
    after that the form shows what the project uses."""
    suggested = design if design and design.qc and not qc_enabled else None
    if suggested is not None:
        suggested = shown(suggested)
    initial = dict(settings)
    if suggested:
        initial = {**initial, **suggested.qc}
    return {
        "qc_initial": initial,
        "qc_suggested": suggested,
        "qc_summary": design_summary(suggested)["qc"] if suggested else "",
    }
