"""Output contracts of the judges: turn a model's text into rubric answers, or say why not.
A parse failure is a ``ParseError`` whose message is stored next to the raw output."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from annotation.rubric import Question, Rubric


class ParseError(ValueError):
    pass


# CULTIVate Tables 29-31: "score is <num>" (the paper prints it as `< num >`).
_SCORE_IS = re.compile(r"score\s+is\s*[:=]?\s*<?\s*(-?\d+(?:\.\d+)?)\s*>?", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_score_is(text: str, q: Question) -> dict[str, Any]:
    found = _SCORE_IS.findall(text or "")
    if not found:
        raise ParseError(f'no "score is <num>" in the reply for {q.id}')
    values = {float(v) for v in found}
    if len(values) > 1:
        raise ParseError(f"the reply gives different scores for {q.id}: {', '.join(sorted(found))}")
    value = values.pop()
    if value != int(value) or int(value) not in q.option_values():
        raise ParseError(f"score {found[0]} is not one of {', '.join(map(str, q.option_values()))} for {q.id}")
    return {q.id: int(value)}


def _coerce(q: Question, v: Any) -> Any:
    """Lenient typing of model JSON: "2" or 2.0 for a scale point, a label for a choice."""
    if isinstance(v, list) and (q.repeat_over or q.type == "checklist"):
        if q.repeat_over:
            return [_coerce_one(q, x) for x in v]
        return [_coerce_one(q, x) for x in v]
    return _coerce_one(q, v)


def _coerce_one(q: Question, v: Any) -> Any:
    if q.type in ("scale", "binary"):
        if isinstance(v, str) and re.fullmatch(r"\s*-?\d+(\.0+)?\s*", v):
            return int(float(v))
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, bool):
            return int(v) if q.type == "binary" else v
    if q.type in ("choice", "checklist") and isinstance(v, str):
        for o in q.options:
            if v.strip().lower() in (str(o.value).lower(), o.label.lower()):
                return o.value
    return v


def parse_json(text: str, rubric: Rubric, questions: Sequence[str]) -> dict[str, Any]:
    raw = (text or "").strip()
    fenced = _FENCE.search(raw)
    if fenced:
        raw = fenced.group(1).strip()
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        raise ParseError("no JSON object in the reply")
    try:
        data = json.loads(raw[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ParseError("the JSON reply is not an object")
    missing = [q for q in questions if q not in data]
    if missing:
        raise ParseError(f"the JSON reply lacks {', '.join(missing)}")
    return {qid: _coerce(rubric.question(qid), data[qid]) for qid in questions}


def _norm(s: str) -> str:
    return re.sub(r"[\s\"'`.\[\]]+", " ", s).strip().lower()


def parse_choice(text: str, choices: Sequence[str]) -> str:
    """One label from a closed list (Cultural Counterfactuals Table 3: "Answer only with one of
    the following choices"). Exact match after trimming quotes and punctuation; otherwise the
    single choice named in the reply; anything else is a parse failure."""
    said = _norm(text or "")
    if not said:
        raise ParseError("empty reply")
    for c in choices:
        if said == _norm(c):
            return c
    named = [c for c in choices if re.search(rf"(?<![a-z]){re.escape(_norm(c))}(?![a-z])", said)]
    # "middle income" also contains "income": prefer the longest, drop choices inside others
    named = [c for c in named if not any(c != d and _norm(c) in _norm(d) for d in named)]
    if len(named) == 1:
        return named[0]
    if not named:
        raise ParseError(f"the reply is not one of: {', '.join(choices)}")
    raise ParseError(f"the reply names several choices: {', '.join(named)}")


def parse_question_choice(text: str, q: Question) -> dict[str, Any]:
    """A closed-choice answer to a rubric question (choice / binary / scale / pairwise): the option
    value or its label."""
    labels = {o.label: o.value for o in q.options}
    values = {str(o.value): o.value for o in q.options}
    picked = parse_choice(text, list(values) + [lbl for lbl in labels if lbl not in values])
    return {q.id: values.get(picked, labels.get(picked))}


def parse_label(text: str, labels: Sequence[str]) -> str:
    """A label judge's answer (Cultural Counterfactuals App. D.1: structured JSON with exactly
    one of ``refused`` / ``answered``): ``{"label": "refused"}``, or the bare label."""
    raw = (text or "").strip()
    fenced = _FENCE.search(raw)
    if fenced:
        raw = fenced.group(1).strip()
    if raw.startswith("{"):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(data, dict) or not isinstance(data.get("label"), str):
            raise ParseError('the JSON reply has no "label"')
        raw = data["label"]
    return parse_choice(raw, labels)
