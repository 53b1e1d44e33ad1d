"""Numbers written as text, shown in the page's language (issue 35): German pages write the
decimal comma (and a semicolon between an interval's bounds), English and Chinese the point.
The expected texts are Django's own locale formatting of the same numbers, not core.numbers."""

from __future__ import annotations

import pytest
from django.utils import formats, translation

from core.numbers import localize_numbers


def django_writes(value: float, decimals: int) -> str:
    """How the active language writes ``value`` (Django's ``number_format``, the reference)."""
    return formats.number_format(value, decimals, use_l10n=True)


@pytest.mark.parametrize("language", ["en", "zh-hans", "de"])
def test_a_number_and_an_interval_read_as_the_language_writes_them(language):
    with translation.override(language):
        point, low, high = (django_writes(v, 3) for v in (0.824, 0.75, 1.5))
        sep = "; " if formats.get_format("DECIMAL_SEPARATOR") == "," else ", "
        assert localize_numbers("0.824") == point
        assert localize_numbers("0.824 [0.750, 1.500]") == f"{point} [{low}{sep}{high}]"
        assert localize_numbers("10 / 11.3") == f"10 / {django_writes(11.3, 1)}"
        assert localize_numbers("+0.5") == f"+{django_writes(0.5, 1)}"


def test_german_uses_the_comma_and_keeps_names_and_versions():
    with translation.override("de"):
        assert localize_numbers("0.82 [0.75, 0.88]") == "0,82 [0,75; 0,88]"
        assert localize_numbers("12.5% [3.1%, 20.0%]") == "12,5% [3,1%; 20,0%]"
        # a version and a model's name are not numbers
        assert localize_numbers("v1.2.3 Qwen2.5 gpt-4.1 /models/3.5") == "v1.2.3 Qwen2.5 gpt-4.1 /models/3.5"
        assert localize_numbers("-0.5, 2.25") == "-0,5; 2,25"  # a list, as the judge form's defaults
        assert localize_numbers("") == ""
    with translation.override("en"):
        assert localize_numbers("0.82 [0.75, 0.88]") == "0.82 [0.75, 0.88]"
