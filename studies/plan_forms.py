"""The plan form (issue 14) and its reading: a researcher never types JSON for a plan.

The balance quota is entered as rows (a value and a count each: ``quota_value`` / ``quota_count``,
repeated), the values offered from the annotators' profiles (``plans.attribute_values``) in a
datalist; the text form "China:2, Germany:2" (``balance_quota``) is still read when no row is
given, for scripts that post it. Used by the sample page (create) and the plan preview (htmx);
what the form offers beside itself (the profiles' values, the item keys) is read by
``selectors.plan_form_facts``."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.errors import DomainError
from studies.models import AssignmentPlan

from .rules import norm, parse_balance_text

#: rows the form shows at least, so a second and third value can be added without script
MIN_QUOTA_ROWS = 3


class PlanForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200, required=False)
    mode = forms.ChoiceField(
        label=gettext_lazy("Mode"), choices=AssignmentPlan.Mode.choices, initial=AssignmentPlan.Mode.POOLED
    )
    k = forms.IntegerField(min_value=1, max_value=100, label=gettext_lazy("Annotators per item (k)"))
    # the datalists (selectors.plan_form_facts) offer the keys and values in the annotators' profiles
    eligibility_attribute = forms.CharField(
        required=False,
        label=gettext_lazy("Eligibility: annotator attribute"),
        help_text=gettext_lazy("e.g. nationality"),
        widget=forms.TextInput(attrs={"list": "profile-keys", "autocomplete": "off"}),
    )
    eligibility_item_key = forms.CharField(
        required=False,
        label=gettext_lazy("... must equal item key"),
        help_text=gettext_lazy("e.g. country (a strata column or a meta key)"),
        widget=forms.TextInput(attrs={"list": "item-keys", "autocomplete": "off"}),
    )
    balance_attribute = forms.CharField(
        required=False,
        label=gettext_lazy("Balance: annotator attribute"),
        help_text=gettext_lazy("e.g. nationality"),
        widget=forms.TextInput(attrs={"list": "profile-keys", "autocomplete": "off"}),
    )
    balance_quota = forms.CharField(
        required=False, label=gettext_lazy("... per item"), help_text=gettext_lazy("e.g. China:2, Germany:2")
    )
    cap_per_annotator = forms.IntegerField(min_value=1, required=False, label=gettext_lazy("Cap per annotator"))
    lease_minutes = forms.IntegerField(
        label=gettext_lazy("Lease minutes"),
        min_value=1,
        max_value=10080,
        required=False,
        help_text=gettext_lazy("pooled: how long an opened item is held (empty = default)"),
    )
    take_over = forms.BooleanField(
        required=False,
        initial=True,
        label=gettext_lazy("Plans replace the default assignment"),
        help_text=gettext_lazy("removes unopened 'every annotator gets every item' rows"),
    )
    confirm_unfilled = forms.BooleanField(
        required=False,
        label=gettext_lazy("Create even if places cannot be filled now"),
        help_text=gettext_lazy(
            "without it, a plan with places no current annotator can take is refused and nothing changes"
        ),
    )


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
