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
#: the names a sample gets when the researcher gives none (``studies.sampling.draw_sample``,
#: ``studies.active``): stored in English, shown in the page's language (issue 35)
DRAWN_AT = re.compile(r"^(active sample|sample) (\d{4}-\d\d-\d\d \d\d:\d\d)$")
ROUND_OF = re.compile(r"^(.*) \(round (\d+) of (\d+)\)$")


@register.filter
def stratum_label(label: str) -> str:
    if m := ROUND.match(str(label or "")):
        return gettext("round %(n)s") % {"n": m.group(1)}
    return label


@register.filter
def sample_name(name: str) -> str:
    """A sample's name; the parts HV wrote itself (a generated name, "(round 1 of 2)") translated."""
    name = str(name or "")
    rounds = ROUND_OF.match(name)
    base = rounds.group(1) if rounds else name
    if m := DRAWN_AT.match(base):
        if m.group(1) == "active sample":
            base = gettext("active sample %(when)s") % {"when": m.group(2)}
        else:
            base = gettext("sample %(when)s") % {"when": m.group(2)}
    if rounds:
        return gettext("%(name)s (round %(n)s of %(rounds)s)") % {
            "name": base,
            "n": rounds.group(2),
            "rounds": rounds.group(3),
        }
    return base
