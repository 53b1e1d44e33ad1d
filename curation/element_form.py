"""The element filter of an acceptance policy as a form (issue 14), instead of JSON.

The policy's ``element_filter`` (see :mod:`curation.policy`) drops elements of a list field
(``over``) that the human raters find wanting: ``keep_if`` is evaluated per element on each
rating, then aggregated (``majority``, ``all``, ``mean``), with ``tie`` deciding ties. The form
covers the common case: which list field, one condition per question repeated over it
(``reflection == 1``), joined with ``and``, the aggregation and the tie. Anything else (``or``,
arithmetic) stays possible in the JSON, shown as the "advanced" view.

Form fields: ``ef_mode`` (``none`` / ``form`` / ``json``; absent = leave the policy's filter
as it is, so clients that never send the form keep their filter), ``ef_over``,
``ef_op_<question>`` and ``ef_value_<question>`` (an empty operator = no condition on that
question), ``ef_aggregation``, ``ef_tie``, and ``element_filter`` (the JSON text)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from annotation.rubric import Question, Rubric
from core.errors import DomainError

from .policy import ELEMENT_AGGREGATIONS, ELEMENT_TIES, PolicyError, parse_element_filter

OPERATORS = ("==", "!=", ">=", "<=", ">", "<")
MODES = ("none", "form", "json")
#: the question types ``keep_if`` may read (as ``curation.policy.compile_policy`` allows)
USABLE_TYPES = ("scale", "binary", "choice")
_CONDITION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=|>=|<=|>|<)\s*(.+?)\s*$")
_AND = re.compile(r"\s+and\s+")


def list_fields(rubric: Rubric) -> dict[str, list[Question]]:
    """Each list field of the items with questions repeated over it, and those questions."""
    fields: dict[str, list[Question]] = {}
    for q in rubric.questions:
        if q.repeat_over and q.type in USABLE_TYPES:
            fields.setdefault(q.repeat_over, []).append(q)
    return fields


def _literal(question: Question, raw: str) -> str:
    """A condition's value as expression text: a number for scale and binary questions, one of
    the options (quoted) for a choice question."""
    text = (raw or "").strip()
    if question.type == "choice":
        values = [str(v) for v in question.option_values()]
        if text not in values:
            raise DomainError(
                _("element filter: %(q)s takes one of %(values)s") % {"q": question.id, "values": ", ".join(values)}
            )
        return json.dumps(text, ensure_ascii=False)
    try:
        number = float(text)
    except ValueError:
        raise DomainError(
            _("element filter: the value for %(q)s must be a number (got %(value)r)")
            % {"q": question.id, "value": text}
        ) from None
    return str(int(number)) if number.is_integer() else repr(number)


def _value_text(literal: str) -> str | None:
    """The form's value of a condition's literal, or None when it is not one the form writes."""
    if literal.startswith('"'):
        try:
            value = json.loads(literal)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, str) else None
    try:
        float(literal)
    except ValueError:
        return None
    return literal


def filter_from_post(data: Mapping[str, Any], rubric: Rubric) -> dict[str, Any] | str | None:
    """The ``element_filter`` a posted policy form asks for: a dict from the form, the JSON text
    of the advanced view, ``{}`` for none, or None when the form was not sent (keep the current
    filter). A form that cannot make a filter is refused with the reason."""
    mode = data.get("ef_mode")
    if mode is None:
        return None
    if mode not in MODES:
        raise DomainError(_("element filter: choose none, the form, or JSON"))
    if mode == "none":
        return {}
    if mode == "json":
        return data.get("element_filter") or ""
    fields = list_fields(rubric)
    over = (data.get("ef_over") or "").strip()
    if over not in fields:
        raise DomainError(
            _("element filter: choose the list field whose elements are filtered (this rubric: %(fields)s)")
            % {"fields": ", ".join(fields) or _("none")}
        )
    conditions = []
    for q in fields[over]:
        op = (data.get(f"ef_op_{q.id}") or "").strip()
        if not op:
            continue
        if op not in OPERATORS:
            raise DomainError(_("element filter: unknown comparison %(op)r") % {"op": op})
        conditions.append(f"{q.id} {op} {_literal(q, data.get(f'ef_value_{q.id}') or '')}")
    if not conditions:
        raise DomainError(
            _("element filter: give at least one condition an element must meet to be kept (e.g. %(q)s == 1)")
            % {"q": fields[over][0].id}
        )
    aggregation = data.get("ef_aggregation") or "majority"
    tie = data.get("ef_tie") or "drop"
    if aggregation not in ELEMENT_AGGREGATIONS or tie not in ELEMENT_TIES:
        raise DomainError(_("element filter: unknown aggregation or tie"))
    return {"over": over, "keep_if": " and ".join(conditions), "aggregation": aggregation, "tie": tie}


def state_from_filter(element_filter: Any, rubric: Rubric) -> dict[str, Any]:
    """The form's values for a stored filter: ``mode`` ``none``, ``form`` (the filter is a
    conjunction of one comparison per repeated question, which the form shows as it is) or
    ``json`` (anything else, shown in the advanced view only)."""
    text = _json_text(element_filter)
    try:
        ef = parse_element_filter(element_filter)
    except PolicyError:
        return _state("json", text)
    if not ef:
        return _state("none", text)
    fields = list_fields(rubric)
    questions = {q.id: q for q in fields.get(ef["over"], [])}
    conditions: dict[str, tuple[str, str]] = {}
    for part in _AND.split(ef["keep_if"]):
        found = _CONDITION.match(part)
        value = _value_text(found.group(3)) if found else None
        if found is None or value is None or found.group(1) not in questions or found.group(1) in conditions:
            return _state("json", text)
        conditions[found.group(1)] = (found.group(2), value)
    return _state("form", text, over=ef["over"], conditions=conditions, aggregation=ef["aggregation"], tie=ef["tie"])


def state_from_post(data: Mapping[str, Any], rubric: Rubric, current: Any) -> dict[str, Any]:
    """The form's values as they were sent (a refused policy is shown again as typed); the
    policy's own filter when the form was not sent."""
    mode = data.get("ef_mode")
    if mode not in MODES:
        return state_from_filter(current, rubric)
    conditions = {
        q.id: (data.get(f"ef_op_{q.id}") or "", data.get(f"ef_value_{q.id}") or "")
        for questions in list_fields(rubric).values()
        for q in questions
        if data.get(f"ef_op_{q.id}")
    }
    return _state(
        mode,
        data.get("element_filter") or "",
        over=data.get("ef_over") or "",
        conditions=conditions,
        aggregation=data.get("ef_aggregation") or "majority",
        tie=data.get("ef_tie") or "drop",
    )


def _json_text(element_filter: Any) -> str:
    if isinstance(element_filter, str):
        return element_filter
    return json.dumps(element_filter, ensure_ascii=False) if element_filter else ""


def _state(
    mode: str,
    text: str,
    *,
    over: str = "",
    conditions: dict[str, tuple[str, str]] | None = None,
    aggregation: str = "majority",
    tie: str = "drop",
) -> dict[str, Any]:
    return {
        "mode": mode,
        "json": text,
        "over": over,
        "conditions": conditions or {},
        "aggregation": aggregation,
        "tie": tie,
    }


def template_context(state: dict[str, Any], rubric: Rubric) -> dict[str, Any]:
    """What the page renders: the state, and per list field its questions with their options and
    the condition each has in the state (the template cannot look a dict up by a variable)."""
    fields = []
    for over, questions in list_fields(rubric).items():
        rows = []
        for q in questions:
            op, value = state["conditions"].get(q.id, ("", "")) if over == state["over"] else ("", "")
            rows.append(
                {
                    "id": q.id,
                    "label": q.label,
                    "choice": q.type == "choice",
                    "options": [(str(o.value), o.label) for o in q.options],
                    "op": op,
                    "value": value,
                }
            )
        fields.append({"over": over, "questions": rows})
    return {
        **state,
        "fields": fields,
        "operators": OPERATORS,
        "aggregations": ELEMENT_AGGREGATIONS,
        "ties": ELEMENT_TIES,
    }
