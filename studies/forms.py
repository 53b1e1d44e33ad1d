"""The study-design pages' forms beside the plan form (``plan_forms``): drawing a sample, hand
(re)assignment on a plan page, the quality-control settings and a Prolific study. Each reads its
own input into what the service takes; nothing here touches the database."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

from benchmarks.base import STRATA_KEYS

from .models import Sample


class SampleForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200, required=False)
    strata = forms.MultipleChoiceField(
        choices=[(k, k) for k in STRATA_KEYS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("Strata columns"),
    )
    meta_keys = forms.CharField(
        required=False,
        label=gettext_lazy("Strata meta keys"),
        help_text=gettext_lazy("comma-separated keys of the items' meta, e.g. pipeline, question_id"),
    )
    allocation = forms.ChoiceField(label=gettext_lazy("Allocation"), choices=Sample.Allocation.choices)
    total_size = forms.IntegerField(
        label=gettext_lazy("Total size"),
        min_value=1,
        required=False,
        help_text=gettext_lazy("a total sample size, e.g. 200 ..."),
    )
    per_stratum = forms.IntegerField(
        label=gettext_lazy("Per stratum"),
        min_value=1,
        required=False,
        help_text=gettext_lazy("... or a size per stratum, e.g. 10"),
    )
    seed = forms.IntegerField(
        label=gettext_lazy("Seed"),
        initial=1,
        help_text=gettext_lazy("any whole number, e.g. 1: the same seed gives the same sample"),
    )

    def keys(self) -> list[str]:
        extra = [k.strip() for k in self.cleaned_data.get("meta_keys", "").split(",") if k.strip()]
        return list(self.cleaned_data.get("strata") or []) + extra

    def params(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "strata_keys": self.keys(),
            "allocation": d["allocation"],
            "total_size": d.get("total_size"),
            "per_stratum": d.get("per_stratum"),
            "seed": d["seed"],
        }


class HandAssignForm(forms.Form):
    item = forms.CharField(max_length=200, label=gettext_lazy("Item id (external)"))
    username = forms.CharField(label=gettext_lazy("Username"), max_length=150)
    force = forms.BooleanField(
        label=gettext_lazy("Force"), required=False, help_text=gettext_lazy("even if the plan's rules say not eligible")
    )


class ReassignForm(forms.Form):
    assignment = forms.IntegerField(min_value=1, label=gettext_lazy("Assignment #"))
    username = forms.CharField(max_length=150, label=gettext_lazy("New annotator"))
    force = forms.BooleanField(label=gettext_lazy("Force"), required=False)


class QCForm(forms.Form):
    # each statistical setting says what it does with an example value (issue 35)
    attention_rate = forms.FloatField(
        label=gettext_lazy("Attention rate"),
        min_value=0,
        max_value=1,
        required=False,
        help_text=gettext_lazy("share of items that are attention checks, between 0 and 1, e.g. 0.05"),
    )
    attention_pause_after = forms.IntegerField(
        label=gettext_lazy("Attention pause after"),
        min_value=0,
        required=False,
        help_text=gettext_lazy("failures that pause (0 = never)"),
    )
    gold_rate = forms.FloatField(
        label=gettext_lazy("Gold rate"),
        min_value=0,
        max_value=1,
        required=False,
        help_text=gettext_lazy("share of items that are gold items with a known answer, e.g. 0.1"),
    )
    gold_threshold = forms.FloatField(
        label=gettext_lazy("Gold threshold"),
        min_value=0,
        max_value=1,
        required=False,
        help_text=gettext_lazy("below this share of gold items answered right, the annotator is at risk, e.g. 0.8"),
    )
    gold_min_answered = forms.IntegerField(
        label=gettext_lazy("Gold min answered"),
        min_value=0,
        required=False,
        help_text=gettext_lazy("gold items answered before the threshold applies, e.g. 3"),
    )
    gold_pause = forms.BooleanField(label=gettext_lazy("Gold pause"), required=False)
    gold_tolerance = forms.IntegerField(
        label=gettext_lazy("Gold tolerance"),
        min_value=0,
        required=False,
        help_text=gettext_lazy("a scale answer this close to the gold one counts as right, e.g. 1"),
    )
    repeat_rate = forms.FloatField(
        label=gettext_lazy("Repeat rate"),
        min_value=0,
        max_value=1,
        required=False,
        help_text=gettext_lazy("share of items shown again to check consistency, e.g. 0.05"),
    )
    min_seconds = forms.IntegerField(
        label=gettext_lazy("Min seconds"),
        min_value=0,
        required=False,
        help_text=gettext_lazy("a submission faster than this is refused, e.g. 5"),
    )
    rationale_question = forms.CharField(label=gettext_lazy("Rationale question"), required=False, max_length=100)
    rationale_min_chars = forms.IntegerField(
        label=gettext_lazy("Rationale min chars"),
        min_value=0,
        required=False,
        help_text=gettext_lazy("the shortest rationale accepted, in characters, e.g. 20"),
    )


class StudyForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    completion_code = forms.CharField(label=gettext_lazy("Completion code"), max_length=64)
    items_per_participant = forms.IntegerField(
        label=gettext_lazy("Items per participant"), min_value=1, max_value=10000, initial=10
    )
    prescreen_attribute = forms.CharField(
        label=gettext_lazy("Prescreen attribute"),
        required=False,
        help_text=gettext_lazy("e.g. nationality (asked before starting)"),
    )
    prescreen_label = forms.CharField(
        label=gettext_lazy("Prescreen label"), required=False, help_text=gettext_lazy("e.g. What is your nationality?")
    )
    prescreen_choices = forms.CharField(
        label=gettext_lazy("Prescreen choices"),
        required=False,
        help_text=gettext_lazy("comma-separated, e.g. China, Germany"),
    )

    def prescreen(self) -> list[dict[str, Any]]:
        """The pre-screen question of a valid form, as ``crowd.create_study`` takes it; [] for none."""
        d = self.cleaned_data
        if not d["prescreen_attribute"]:
            return []
        return [
            {
                "attribute": d["prescreen_attribute"],
                "label": d["prescreen_label"],
                "choices": [c for c in d["prescreen_choices"].split(",") if c.strip()],
            }
        ]
