"""The one form renderer: turns (preset item schema, rubric, item, assignment presentation,
answers) into plain view data that ``templates/annotation/_form.html`` shows for every preset.
Everything here is data; escaping is the template's job (autoescape is on)."""

from __future__ import annotations

import json
from typing import Any

from django.urls import reverse

from benchmarks.base import STRATA_KEYS

from .models import Assignment, Item, Project
from .rubric import Question, Rubric, fill_prompt, pair_order


def asset_urls(sha: str) -> dict[str, str]:
    return {"url": reverse("asset", args=[sha]), "thumb": reverse("asset_thumb", args=[sha])}


def stimulus_blocks(*, project: Project, rubric: Rubric, item_ctx: dict[str, Any], presentation: dict) -> list[dict]:
    """What the annotator looks at, in the preset's field order. Fields used by a pairwise
    question are shown in the assignment's stored left/right order; list fields that a
    question repeats over are shown with that question instead."""
    preset = project.preset
    paired = {f for q in rubric.questions if q.pair for f in q.pair}
    repeated = {q.repeat_over for q in rubric.questions if q.repeat_over}
    blocks: list[dict] = []
    groups: dict[str, dict] = {}
    for spec in preset.item_fields:
        name = spec["name"]
        if name in paired or name in repeated or spec.get("display", True) is False:
            continue
        if spec.get("hint") and not project.show_model_hints:
            continue
        value = item_ctx.get(name)
        if value is None or value == "" or value == []:
            continue
        label = spec.get("label", name.replace("_", " ").capitalize())
        if spec["type"] == "image":
            image = {"label": label, **asset_urls(value)}
            group = spec.get("group")
            if group:
                if group not in groups:
                    groups[group] = {"kind": "images", "images": []}
                    blocks.append(groups[group])
                groups[group]["images"].append(image)
            else:
                blocks.append({"kind": "images", "images": [image]})
        elif spec["type"] == "list":
            blocks.append({"kind": "list", "label": label, "values": [_as_text(v) for v in value]})
        elif spec["type"] == "object":
            blocks.append(
                {
                    "kind": "pairs",
                    "label": label,
                    "hint": bool(spec.get("hint")),
                    "values": [(str(k), _as_text(v)) for k, v in value.items()],
                }
            )
        else:
            blocks.append({"kind": spec["type"], "label": label, "value": str(value)})
    for q in rubric.questions:
        if q.pair:
            order = pair_order(q, presentation)
            blocks.append(
                {
                    "kind": "pair",
                    "sides": [
                        {"label": side.capitalize(), "value": _as_text(item_ctx.get(f))}
                        for side, f in zip(("left", "right"), order, strict=True)
                    ],
                }
            )
    return blocks


def question_blocks(
    *, rubric: Rubric, item_ctx: dict[str, Any], answers: dict[str, Any] | None, errors: dict[str, str] | None
) -> list[dict]:
    answers = answers or {}
    errors = errors or {}
    out = []
    for q in rubric.questions:
        value = answers.get(q.id)
        if q.repeat_over:
            elements_src = item_ctx.get(q.repeat_over) or []
            values = value if isinstance(value, list) else [None] * len(elements_src)
            elements = [
                _element(
                    q,
                    f"{q.id}.{i}",
                    values[i] if i < len(values) else None,
                    label=q.repeat_label.format(n=i + 1),
                    shown=_shown(q, el),
                )
                for i, el in enumerate(elements_src)
            ]
        else:
            elements = [_element(q, q.id, value, label="", shown=[])]
        out.append(
            {
                "id": q.id,
                "type": q.type,
                "label": q.label,
                "prompt": fill_prompt(q.prompt, item_ctx),
                "help": q.help,
                "elements": elements,
                "error": errors.get(q.id, ""),
                "required": q.required and q.required_if is None,
                "conditional": q.required_if.source if q.required_if else "",
                "empty_note": "Nothing to rate here (NA)." if q.repeat_over and not elements else "",
            }
        )
    return out


def _shown(q: Question, element: Any) -> list[tuple[str, str]]:
    if isinstance(element, dict):
        keys = q.repeat_show or tuple(element)
        return [(k.replace("_", " ").capitalize(), _as_text(element.get(k))) for k in keys]
    return [("", _as_text(element))]


def _element(q: Question, name: str, value: Any, *, label: str, shown: list) -> dict:
    options = []
    for o in q.options:
        checked = (o.value in value) if isinstance(value, list) else (value is not None and o.value == value)
        options.append({"value": o.value, "label": o.label, "key": o.key, "checked": checked})
    return {
        "name": name,
        "label": label,
        "shown": shown,
        "options": options,
        "text": value if q.type == "text" and isinstance(value, str) else "",
    }


def _as_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def annotator_item_payload(*, assignment: Assignment, item_ctx: dict[str, Any]) -> dict[str, Any]:
    """The item as an annotator's API client sees it: displayable fields only, images as URLs,
    hints only when the project enables them."""
    project = assignment.project
    rubric = project.rubric_version.parsed()
    paired = {f for q in rubric.questions if q.pair for f in q.pair}
    data: dict[str, Any] = {}
    for spec in project.preset.item_fields:
        name = spec["name"]
        # Pair fields are never sent under their names: that would reveal e.g. which is human.
        if name in paired or spec.get("display", True) is False or (spec.get("hint") and not project.show_model_hints):
            continue
        if name not in item_ctx:
            continue
        data[name] = asset_urls(item_ctx[name]) if spec["type"] == "image" else item_ctx[name]
    for key in STRATA_KEYS:
        if key in item_ctx:
            data.setdefault(key, item_ctx[key])
    for q in rubric.questions:
        if q.pair:
            left, right = pair_order(q, assignment.presentation)
            data.setdefault("pairs", {})[q.id] = {"left": item_ctx.get(left), "right": item_ctx.get(right)}
    return data


def item_render_context(item: Item) -> dict[str, Any]:
    """What a rubric prompt and per-element repetition see: the item's fields plus its strata."""
    ctx = {k: getattr(item, k) for k in STRATA_KEYS if getattr(item, k)}
    ctx.update(item.data)
    return ctx
