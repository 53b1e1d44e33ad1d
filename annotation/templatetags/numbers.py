"""``{% load numbers %}``: ``{{ text|numbers }}`` shows the numbers of a text that Python
formatted (the statistics core's ``0.82 [0.75, 0.88]``) in the page's language (issue 35;
:mod:`core.numbers`). Plain numbers need no filter: Django localizes them itself."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeData, mark_safe

from core.numbers import localize_numbers

register = template.Library()


@register.filter(name="numbers")
def numbers(text: object) -> object:
    if not isinstance(text, str):
        return text
    # only digits change, so a text already escaped (a joined list) stays safe
    return mark_safe(localize_numbers(text)) if isinstance(text, SafeData) else localize_numbers(text)
