"""The study design's forms in plain words (issue 35): every statistical setting of the sample
and quality-control forms says what it does with an example value, in the page's language."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from studies.forms import QCForm, SampleForm

STATISTICAL = {
    SampleForm: ("total_size", "per_stratum", "seed"),
    QCForm: (
        "attention_rate",
        "gold_rate",
        "gold_threshold",
        "gold_min_answered",
        "gold_tolerance",
        "repeat_rate",
        "min_seconds",
        "rationale_min_chars",
    ),
}
EXAMPLE = {"en": re.compile(r"e\.g\. \d"), "de": re.compile(r"z\. B\. \d"), "zh-hans": re.compile(r"例如 \d")}


@pytest.mark.parametrize("language", sorted(EXAMPLE))
def test_every_statistical_setting_gives_an_example_value(language):
    with translation.override(language):
        for form, names in STATISTICAL.items():
            for name in names:
                help_text = str(form.base_fields[name].help_text)
                assert EXAMPLE[language].search(help_text), (form.__name__, name, help_text)
                if language == "de":  # the German decimal comma
                    assert not re.search(r"\d\.\d", help_text), (name, help_text)
