"""Labels the study design writes itself, shown in the page's language (``{% load study_labels %}``).

A stratum label is data (``country=China``, what the researcher's strata keys give), except the
one an active sample writes for each of its rounds (``round 2``, :mod:`studies.active`), which is
the platform's word and is translated here; the stored label stays as it is."""

from __future__ import annotations

import re

from django import template
from django.utils.translation import gettext

register = template.Library()

ROUND = re.compile(r"^round (\d+)$")


@register.filter
def stratum_label(label: str) -> str:
    if m := ROUND.match(str(label or "")):
        return gettext("round %(n)s") % {"n": m.group(1)}
    return label
