"""Forms and tables in plain words and the page's numbers (issue 35): the active sample's form
names each statistical parameter without notation and gives an example value; the validation
tables write their numbers as the page's language does, the downloads keep the paper's English."""

from __future__ import annotations

import re

from django.utils import translation

from agreement import table_strings
from agreement.active_forms import ActiveSampleForm

STATISTICAL = ("budget", "target_half_width", "residual_variance", "tau", "floor", "seed", "rounds")
NOTATION = re.compile(r"\[|\]|\^|\btau\b|E\[|\bf\)")


def test_every_statistical_parameter_has_a_plain_label_and_an_example_value():
    form = ActiveSampleForm()
    for name in STATISTICAL:
        field = form.fields[name]
        label, help_text = str(field.label), str(field.help_text)
        assert not NOTATION.search(label), (name, label)
        assert re.search(r"e\.g\. \d", help_text), (name, help_text)


def test_the_examples_read_with_the_german_decimal_comma():
    with translation.override("de"):
        form = ActiveSampleForm()
        helps = {name: str(form.fields[name].help_text) for name in STATISTICAL}
    assert "z. B. 0,5" in helps["tau"] and "z. B. 0,2" in helps["floor"]
    assert not any(re.search(r"\d\.\d", h) for h in helps.values()), helps


def test_a_tables_numbers_read_as_the_page_language_writes_them():
    table = {
        "title": "Total",
        "columns": ["Pearson r"],
        "rows": [
            {
                "label": "Total",
                "cells": [
                    {"format": "number", "display": "0.82 [0.75, 0.88]"},
                    {"format": "text", "display": "Good"},
                ],
            }
        ],
    }
    with translation.override("de"):
        german = table_strings.translate_table(table)
    with translation.override("en"):
        english = table_strings.translate_table(table)
    assert german["rows"][0]["cells"][0]["display"] == "0,82 [0,75; 0,88]"
    assert english["rows"][0]["cells"][0]["display"] == "0.82 [0.75, 0.88]"
    assert table["rows"][0]["cells"][0]["display"] == "0.82 [0.75, 0.88]"  # the download's copy is untouched
