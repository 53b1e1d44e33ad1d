"""The plan form's reading and what it offers (issue 14): a researcher never types JSON for a plan.

The balance quota is entered as rows (a value and a count each: ``quota_value`` / ``quota_count``,
repeated), the values offered from the annotators' profiles (``plans.attribute_values``) in a
datalist; the text form "China:2, Germany:2" (``balance_quota``) is still read when no row is
given, for scripts that post it. Used by the sample page (create) and the plan preview (htmx)."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from django import forms
from django.utils.translation import gettext as _

from annotation.models import Item, Project
from benchmarks.base import STRATA_KEYS
from core.errors import DomainError

from . import plans
from .rules import norm, parse_balance_text

#: rows the form shows at least, so a second and third value can be added without script
MIN_QUOTA_ROWS = 3


def posted_rows(form: forms.Form) -> list[tuple[str, str]]:
    """The quota rows a bound form was sent (value, count), blank rows included."""
    data = form.data
    if not hasattr(data, "getlist"):
        return []
    values, counts = data.getlist("quota_value"), data.getlist("quota_count")
    return [(str(v).strip(), str(c).strip()) for v, c in zip_longest(values, counts, fillvalue="")]


def quota_rows(form: forms.Form, profile_values: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
    """The rows to show: what was sent (a bound form) or the initial quota (the paper's design),
    then, on a fresh form, the other values of the balance attribute in the annotators' profiles
    with no count, then blank rows up to :data:`MIN_QUOTA_ROWS`."""
    if form.is_bound:
        rows = [r for r in posted_rows(form) if r[0] or r[1]]
        if not rows and form.data.get("balance_quota"):
            try:
                quota = parse_balance_text("x", form.data.get("balance_quota", "")).get("quota", {})
            except DomainError:
                quota = {}
            rows = [(value, str(n)) for value, n in quota.items()]
    else:
        try:
            quota = parse_balance_text("x", form.initial.get("balance_quota") or "").get("quota", {})
        except DomainError:
            quota = {}
        rows = [(value, str(n)) for value, n in quota.items()]
        listed = {norm(v) for v, _ in rows}
        attribute = form.initial.get("balance_attribute") or ""
        rows += [(v, "") for v in profile_values.get(attribute, {}) if norm(v) not in listed]
    return rows + [("", "")] * max(MIN_QUOTA_ROWS - len(rows), 1)


def balance_from(form: forms.Form) -> dict[str, Any]:
    """The balance rule of a valid form: the quota rows, else the ``balance_quota`` text; {} for none."""
    attribute = (form.cleaned_data.get("balance_attribute") or "").strip()
    rows = [r for r in posted_rows(form) if r[0] or r[1]]
    if not rows:
        balance = parse_balance_text(attribute, form.cleaned_data.get("balance_quota") or "")
    else:
        quota: dict[str, int] = {}
        seen: set[str] = set()
        for value, count in rows:
            if not value:
                raise DomainError(
                    _("a balance count of %(n)s has no value: give the value or clear the count") % {"n": count}
                )
            if not count:
                raise DomainError(
                    _("give how many annotators with %(attribute)s = %(value)s each item gets, or clear the value")
                    % {"attribute": attribute or _("the attribute"), "value": value}
                )
            try:
                n = int(count)
            except ValueError:
                raise DomainError(_("balance count %(n)r is not a whole number") % {"n": count}) from None
            if norm(value) in seen:
                raise DomainError(_("the balance value %(value)s is given twice") % {"value": value})
            seen.add(norm(value))
            quota[value] = n
        balance = {"attribute": attribute, "quota": quota}
    if balance and not balance["attribute"]:
        raise DomainError(_("a balance rule needs an annotator attribute"))
    return balance


def plan_arguments(form: forms.Form) -> dict[str, Any]:
    """``plans.create_plan``'s keyword arguments from a valid plan form (a sample and the user aside)."""
    d = form.cleaned_data
    eligibility = []
    if d["eligibility_attribute"] or d["eligibility_item_key"]:
        eligibility = [{"attribute": d["eligibility_attribute"], "item_key": d["eligibility_item_key"]}]
    return {
        "name": d["name"],
        "mode": d["mode"],
        "k": d["k"],
        "eligibility": eligibility,
        "balance": balance_from(form),
        "cap_per_annotator": d["cap_per_annotator"],
        "lease_seconds": d["lease_minutes"] * 60 if d["lease_minutes"] else None,
        "take_over": d["take_over"],
    }


def forecast_arguments(form: forms.Form) -> dict[str, Any]:
    """``plans.forecast_plan``'s keyword arguments (what changes the places, not the name or lease)."""
    args = plan_arguments(form)
    return {key: args[key] for key in ("mode", "k", "eligibility", "balance", "cap_per_annotator", "take_over")}


def item_keys(project: Project, meta_keys: list[str]) -> list[str]:
    """Item keys an eligibility rule can compare with: the strata columns that hold a value in
    this project, then the items' meta keys."""
    used = [key for key in STRATA_KEYS if Item.objects.filter(project=project).exclude(**{key: ""}).exists()]
    return used + [k for k in meta_keys if k not in used]


def form_context(project: Project, form: forms.Form, meta_keys: list[str]) -> dict[str, Any]:
    """What the plan form template needs beyond the form: the profiles' keys and values (the
    datalists and the table beside the form), the item keys, and the quota rows."""
    profile_values = plans.attribute_values(project)
    return {
        "profile_values": profile_values,
        "item_keys": item_keys(project, meta_keys),
        "quota_rows": quota_rows(form, profile_values),
        "annotator_count": len(plans.project_annotators(project)),
    }
