"""The form of an active sample's page (``active_views``): which judge, which uncertainty, the
human budget (an expected number of items, or a target half-width turned into one), the
probabilities' floor and uniform mix, the seed and the number of rounds."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from hvstats.active import DEFAULT_FLOOR_FRACTION, DEFAULT_TAU


class ActiveSampleForm(forms.Form):
    judge = forms.TypedChoiceField(coerce=int, label=_("Judge"))
    source = forms.ChoiceField(label=_("Uncertainty"))
    field = forms.ChoiceField(
        label=_("Rubric field"), help_text=_("the field the uncertainty and the refits are about")
    )
    # Every statistical parameter reads in plain words, with an example value in its help (issue
    # 35); the notation (PPI++ active inference, Zrnic & Candès 2024, Eq. 6-7) stays in the docs.
    budget = forms.FloatField(
        required=False,
        min_value=0.0,
        label=_("Budget (expected human-labelled items)"),
        help_text=_("how many items people should label, on average; e.g. 200 (or give a half-width below)"),
    )
    target_half_width = forms.FloatField(
        required=False,
        min_value=0.0,
        # xgettext:no-python-format
        label=_("Target 95% half-width"),
        # xgettext:no-python-format
        help_text=_(
            "how far the 95% CI may reach on each side of the estimate, e.g. 0.05; turned into a budget "
            "with the judge's typical error, and with several rounds also the rule to stop"
        ),
    )
    residual_variance = forms.FloatField(
        required=False,
        min_value=0.0,
        label=_("Judge's typical squared error"),
        help_text=_(
            "the mean of (human label - judge's label) squared, e.g. 0.04 for labels between 0 and 1; "
            "empty: estimated from the items people and the judge both rated"
        ),
    )
    # the default keeps the 95% intervals covering when the uncertainty carries no signal
    # (issue 34; hvstats.active.DEFAULT_TAU, docs/benchmarks.md "Defaults that keep coverage")
    tau = forms.FloatField(
        required=False,  # left empty: DEFAULT_TAU (clean)
        initial=DEFAULT_TAU,
        min_value=0.0,
        max_value=1.0,
        label=_("Share of items drawn at random"),
        help_text=_(
            "between 0 and 1: the part of the draw that ignores the judge's uncertainty, e.g. 0.5, which "
            "keeps the intervals valid when the uncertainty carries no signal; 0 follows the uncertainty only"
        ),
    )
    floor = forms.FloatField(
        initial=DEFAULT_FLOOR_FRACTION,
        min_value=0.0001,
        max_value=1.0,
        label=_("Floor (fraction of the uniform probability)"),
        help_text=_("the least chance any item keeps, as a share of an equal chance, e.g. 0.2"),
    )
    seed = forms.IntegerField(
        initial=0,
        min_value=0,
        label=_("Seed"),
        help_text=_("any whole number, e.g. 0: the same seed draws the same items"),
    )
    rounds = forms.IntegerField(
        initial=1,
        min_value=1,
        max_value=20,
        label=_("Rounds"),
        help_text=_("draw in this many steps, refitting in between, e.g. 2"),
    )
    name = forms.CharField(required=False, max_length=150, label=_("Name"))

    def __init__(self, *args: Any, judges=(), sources=(), fields=(), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(j.id, j.name) for j in judges]
        self.fields["source"].choices = list(sources)
        self.fields["field"].choices = [(f, f) for f in fields]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("budget") and not data.get("target_half_width"):
            raise forms.ValidationError(_("give a budget or a target half-width"))
        if data.get("tau") is None and "tau" not in self.errors:
            data["tau"] = DEFAULT_TAU
        return data


class NextRoundForm(forms.Form):
    refit = forms.BooleanField(
        required=False, initial=True, label=_("Refit the uncertainty on the human labels so far")
    )
