"""The judge form's parameter fields: one field per declared parameter of every backend in the
registry (``judges/registry.py``; the declarations in ``judges/params.py``), grouped in one section per backend with what it can answer
(``judges/capabilities.py``).

Every section is in the page; the page's CSS shows only the chosen backend's (and, within it,
the chosen mode's) fields, and without that CSS all are shown. Only the chosen backend's fields
are read. A field left empty is not set (the backend's default applies), so a judge made with
the fields stores the same ``params`` as one made with the JSON of the values set. The raw JSON
stays as an advanced textarea, merged with the fields (a key set in both, to different values,
is an error)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.translation import gettext as _

from core.numbers import localize_numbers

from . import endpoints
from . import params as judge_params
from .capabilities import Capability
from .params import Param
from .registry import BACKENDS

PREFIX = "p"
NULL_SUFFIX = "-null"


def field_name(backend: str, name: str) -> str:
    return f"{PREFIX}-{backend}-{name}"


# ------------------------------------------------------------------------------ choices offered
def endpoint_suggestions() -> list[str]:
    """Endpoints to offer: the administrator's default and one URL per allowed host and port (an
    entry naming no port means the scheme's default; ``host:*`` is offered with vLLM's 8000);
    wildcard entries are named in the help instead."""
    out = []
    default = endpoints.default_base_url()
    if default:
        out.append(default)
    for entry in endpoints.allowed_hosts():
        if entry == "*" or entry.startswith((".", "*.")):
            continue
        if entry.startswith("["):
            host, _, rest = entry[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else ""
        elif entry.count(":") == 1:
            host, port = entry.split(":")
        else:
            host, port = entry, ""
        shown = f"[{host}]" if ":" in host else host
        port = "8000" if port == "*" else port
        url = f"http://{shown}:{port}/v1" if port else f"http://{shown}/v1"
        if url not in out:
            out.append(url)
    return out


def key_name_suggestions() -> list[str]:
    """Key-variable names to offer (names only, never a value): the allowed names, and the
    environment variables matching an allowed prefix (``HV_JUDGE_KEY_*``) that are set here."""
    out = [endpoints.DEFAULT_KEY_ENV]
    prefixes = []
    for name in endpoints.allowed_key_names():
        if name.endswith("*"):
            prefixes.append(name[:-1])
        elif name not in out:
            out.append(name)
    out += sorted(n for n in os.environ if any(n.startswith(p) for p in prefixes) and n not in out)
    allowed = []
    for name in out:
        try:
            allowed.append(endpoints.check_key_name(name))
        except ValueError:  # listed, but one of the platform's own secrets
            continue
    return allowed


# ------------------------------------------------------------------------------ fields
class PairWidget(forms.MultiWidget):
    def __init__(self) -> None:
        super().__init__([forms.NumberInput(attrs={"step": "any"}), forms.NumberInput(attrs={"step": "any"})])

    def decompress(self, value: Any) -> list[Any]:
        return list(value) if isinstance(value, (list, tuple)) and len(value) == 2 else [None, None]


class PairField(forms.MultiValueField):
    """Two numbers ([low, high]); both empty = not set."""

    widget = PairWidget

    def __init__(self, **kwargs: Any) -> None:
        fields = (forms.FloatField(required=False), forms.FloatField(required=False))
        kwargs["required"] = False
        super().__init__(fields=fields, require_all_fields=False, **kwargs)

    def compress(self, data_list: list[Any]) -> list[float] | None:
        values = list(data_list or [])
        if not values or all(v is None for v in values):
            return None
        if any(v is None for v in values):
            raise forms.ValidationError(_("give both numbers"))
        return [values[0], values[1]]


def _help(p: Param) -> str:
    # the numbers in the page's language (issue 35); the JSON the form takes keeps the point
    parts = [str(p.help), _("Default: %(default)s.") % {"default": localize_numbers(p.default_shown())}]
    if p.range_text() and p.type != judge_params.CHOICE:
        parts.append(_("Allowed: %(range)s.") % {"range": localize_numbers(p.range_text())})
    return " ".join(parts)


def _choice_text(p: Param, value: str) -> str:
    """A choice as the form offers it: in words, with the value the JSON takes."""
    label = p.choice_label(value)
    return f"{label} ({value})" if label else value


def param_fields(backend: str, p: Param, *, image_fields: Sequence[str]) -> dict[str, forms.Field]:
    """The form field(s) of one parameter (a nullable one has a "null" checkbox too); {} for a
    parameter with nothing to pick (image fields of a preset without images)."""
    name = field_name(backend, p.name)
    # the parameter in words, and its key as the JSON and the API take it
    label = format_html('{} <span class="param-key">(<code>{}</code>)</span>', p.label, p.name)
    common = {"required": False, "label": label, "help_text": _help(p)}
    attrs = {"data-param": p.name}
    t = p.type
    field: forms.Field
    if t == judge_params.INT:
        field = forms.IntegerField(widget=forms.NumberInput(attrs=attrs), **common)
    elif t == judge_params.NUMBER:
        field = forms.FloatField(widget=forms.NumberInput(attrs={**attrs, "step": "any"}), **common)
    elif t == judge_params.BOOL:
        field = forms.BooleanField(widget=forms.CheckboxInput(attrs=attrs), **common)
    elif t == judge_params.CHOICE:
        default = _("default: %(default)s") % {"default": p.default_shown()}
        field = forms.ChoiceField(
            choices=[("", default), *((c, _choice_text(p, c)) for c in p.choices)],
            widget=forms.Select(attrs=attrs),
            **common,
        )
    elif t == judge_params.NUMBER_PAIR:
        field = PairField(**common)
    elif t == judge_params.IMAGE_FIELDS:
        if not image_fields:
            return {}
        field = forms.MultipleChoiceField(
            choices=[(f, f) for f in image_fields], widget=forms.CheckboxSelectMultiple(attrs=attrs), **common
        )
    else:  # text, endpoint, key name, device, stop: typed, with suggestions where there are some
        if t in (judge_params.ENDPOINT, judge_params.KEY_ENV, judge_params.DEVICE):
            attrs["list"] = f"{PREFIX}-list-{t}"
        field = forms.CharField(max_length=2000, widget=forms.TextInput(attrs=attrs), **common)
    out: dict[str, forms.Field] = {name: field}
    if p.nullable:
        out[name + NULL_SUFFIX] = forms.BooleanField(required=False, label=str(p.null_help))
    return out


def build_fields(image_fields: Sequence[str]) -> dict[str, forms.Field]:
    """Every backend's parameter fields, by field name."""
    out: dict[str, forms.Field] = {}
    for backend, entry in BACKENDS.items():
        for p in entry.schema():
            out.update(param_fields(backend, p, image_fields=image_fields))
    return out


def collect(cleaned: Mapping[str, Any], backend: str) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """(params set in the chosen backend's fields, param -> its field name, field name -> error)."""
    values: dict[str, Any] = {}
    where: dict[str, str] = {}
    errors: dict[str, str] = {}
    for p in BACKENDS[backend].schema():
        name = field_name(backend, p.name)
        value = cleaned.get(name)
        null = bool(cleaned.get(name + NULL_SUFFIX))
        where[p.name] = name
        if null:
            if value not in (None, ""):
                errors[name] = _("give a threshold or leave the flag undecided, not both")
                continue
            values[p.name] = None
        elif value is None or value is False or (isinstance(value, (str, list)) and not value):
            continue  # not set: the backend's default (a 0 typed in is a value)
        elif p.type in (judge_params.INT, judge_params.NUMBER):
            values[p.name] = _plain(value)
        elif p.type == judge_params.NUMBER_PAIR:
            values[p.name] = [_plain(v) for v in value]
        else:
            values[p.name] = value
    return values, where, errors


def _plain(value: float) -> int | float:
    """A number as JSON gives it: 60.0 from a number field is 60, 0.7 stays 0.7."""
    return int(value) if float(value).is_integer() else float(value)


@dataclass(frozen=True)
class Row:
    """One parameter's field(s) in a section (the template renders it)."""

    param: Param
    field: forms.BoundField
    null: forms.BoundField | None

    @property
    def modes(self) -> str:
        return " ".join(self.param.modes)

    @property
    def extractors(self) -> str:
        return " ".join(self.param.extractors)


@dataclass(frozen=True)
class Section:
    """One backend's part of the form."""

    backend: str
    label: str
    capability: Capability
    model_help: str
    rows: tuple[Row, ...]
    advanced: tuple[Row, ...]
    modes: tuple[str, ...]
    preset_mode: str
    endpoint: bool = False  # it takes an endpoint: the form names the allowed hosts and keys

    @property
    def advanced_errors(self) -> bool:
        """A folded field has an error: the fold opens."""
        return any(r.field.errors or (r.null is not None and r.null.errors) for r in self.advanced)


def sections(
    form: forms.Form, capabilities: Mapping[str, Capability], preset_modes: Mapping[str, str]
) -> list[Section]:
    out = []
    for backend, cap in capabilities.items():
        entry = BACKENDS[backend]
        rows = []
        for p in entry.schema():
            name = field_name(backend, p.name)
            if name not in form.fields:
                continue
            null = form[name + NULL_SUFFIX] if name + NULL_SUFFIX in form.fields else None
            rows.append(Row(p, form[name], null))
        modes = tuple(entry.modes)
        out.append(
            Section(
                backend=backend,
                label=cap.label,
                capability=cap,
                # what the model id means for this backend (``%(model)s``: its default model)
                model_help=str(entry.model_help) % {"model": entry.default_model},
                rows=tuple(r for r in rows if not r.param.advanced),
                advanced=tuple(r for r in rows if r.param.advanced),
                modes=tuple(modes),
                preset_mode=preset_modes.get(backend, ""),
                endpoint=any(p.type == judge_params.ENDPOINT for p in entry.schema()),
            )
        )
    return out


def backends_of(family: str) -> str:
    """The registry's backends of this family (``BackendEntry.family``), as the form's
    ``data-backend`` attribute lists the backends a fieldset is for."""
    return " ".join(key for key, entry in BACKENDS.items() if entry.family == family)


__all__ = [
    "NULL_SUFFIX",
    "Row",
    "Section",
    "backends_of",
    "build_fields",
    "collect",
    "endpoint_suggestions",
    "field_name",
    "key_name_suggestions",
    "param_fields",
    "sections",
]
