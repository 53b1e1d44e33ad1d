"""The form of an active sample's page (``active_views``): which judge, which uncertainty, the
human budget (an expected number of items, or a target half-width turned into one), the
probabilities' floor and uniform mix, the seed and the number of rounds."""

from __future__ import annotations

from typing import Any

from django import forms

from stats.active import DEFAULT_FLOOR_FRACTION


class ActiveSampleForm(forms.Form):
    judge = forms.TypedChoiceField(coerce=int, label="Judge")
    source = forms.ChoiceField(label="Uncertainty")
    field = forms.ChoiceField(label="Rubric field", help_text="the field the uncertainty and the refits are about")
    budget = forms.FloatField(
        required=False, min_value=0.0, label="Budget (expected human-labelled items)", help_text="or a half-width below"
    )
    target_half_width = forms.FloatField(
        required=False,
        min_value=0.0,
        label="Target 95% half-width",
        help_text="turned into a budget with the judge's residual variance; with several rounds, also the stopping rule",
    )
    residual_variance = forms.FloatField(
        required=False,
        min_value=0.0,
        label="Judge's residual variance E[(Y - f)^2]",
        help_text="empty: estimated from the items people and the judge both rated",
    )
    tau = forms.FloatField(initial=0.0, min_value=0.0, max_value=1.0, label="Uniform mix tau")
    floor = forms.FloatField(
        initial=DEFAULT_FLOOR_FRACTION,
        min_value=0.0001,
        max_value=1.0,
        label="Floor (fraction of the uniform probability)",
    )
    seed = forms.IntegerField(initial=0, min_value=0, label="Seed")
    rounds = forms.IntegerField(initial=1, min_value=1, max_value=20, label="Rounds")
    name = forms.CharField(required=False, max_length=150, label="Name")

    def __init__(self, *args: Any, judges=(), sources=(), fields=(), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(j.id, j.name) for j in judges]
        self.fields["source"].choices = list(sources)
        self.fields["field"].choices = [(f, f) for f in fields]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("budget") and not data.get("target_half_width"):
            raise forms.ValidationError("give a budget or a target half-width")
        return data


class NextRoundForm(forms.Form):
    refit = forms.BooleanField(required=False, initial=True, label="Refit the uncertainty on the human labels so far")
