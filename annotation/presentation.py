"""The one form renderer: turns (preset item schema, rubric, item, assignment presentation,
answers) into plain view data that ``templates/annotation/annotate.html`` shows for every preset.
Everything here is data; escaping is the template's job (autoescape is on)."""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import get_script_prefix, reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from benchmarks.base import STRATA_KEYS

from .models import Assignment, Item, Project
from .rubric import CANONICAL_LOCALE, Question, Rubric, fill_prompt, pair_order

_HASH = re.compile(r"[0-9a-f]{64}")
#: a pairwise question's sides and options are the form's words, not rubric text: the UI's language
PAIR_WORDS = {
    "left": pgettext_lazy("pairwise side", "Left"),
    "right": pgettext_lazy("pairwise side", "Right"),
    "tie": pgettext_lazy("pairwise side", "Tie"),
}
_HASH_SLOT = "0" * 64
_ASSET_URLS: dict[str, tuple[str, str]] = {}


def asset_urls(sha: str) -> dict[str, str]:
    if not isinstance(sha, str) or not _HASH.fullmatch(sha):
        return {"url": reverse("asset", args=[sha]), "thumb": reverse("asset_thumb", args=[sha])}
    # reverse() costs tens of microseconds and an item needs two per image: the two patterns are
    # reversed once per script prefix, then a hash (nothing to escape) takes the slot's place
    prefix = get_script_prefix()
    urls = _ASSET_URLS.get(prefix)
    if urls is None:
        urls = _ASSET_URLS[prefix] = (reverse("asset", args=[_HASH_SLOT]), reverse("asset_thumb", args=[_HASH_SLOT]))
    return {"url": urls[0].replace(_HASH_SLOT, sha), "thumb": urls[1].replace(_HASH_SLOT, sha)}


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
        label = rubric.field_labels.get(name) or spec.get("label", name.replace("_", " ").capitalize())
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
                        {"label": str(PAIR_WORDS[side]), "value": _as_text(item_ctx.get(f))}
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
        required = q.required and q.required_if is None
        when, when_text = _required_when(rubric, q) if q.required_if is not None else (None, "")
        out.append(
            {
                "id": q.id,
                "type": q.type,
                "label": q.label,
                "prompt": fill_prompt(q.prompt, item_ctx),
                "help": q.help,
                "elements": elements,
                "error": errors.get(q.id, ""),
                "required": required,
                "conditional": q.required_if.source if q.required_if else "",
                # For annotate.js: the answers under which a conditional question is asked
                # (and required); None when the condition cannot be listed, and then the
                # question is always shown and the server alone decides.
                "required_when": json.dumps(when) if when is not None else "",
                "required_when_text": when_text,
                # Optional free text is never focused by auto-advance (issue 14): Enter
                # there would type a newline instead of submitting.
                "optional_text": q.type == "text" and not required and q.required_if is None,
                "reversed_cue": _reversed_cue(q),
                "empty_note": _("Nothing to rate here (NA).") if q.repeat_over and not elements else "",
            }
        )
    return out


# At most this many answer combinations are listed for a conditional question; a condition
# over more is left to the server.
MAX_WHEN_ROWS = 512
_LISTABLE = ("scale", "binary", "choice", "pairwise")


def _required_when(rubric: Rubric, q: Question) -> tuple[dict | None, str]:
    """The answers under which ``q.required_if`` holds, listed so that the browser can mark
    the question required and skip it otherwise without evaluating expressions:
    ``{"names": [question ids], "when": [[value or None, ...], ...]}`` (values as the form's
    strings), and a sentence for the annotator. ``(None, text)`` when the condition reads
    anything but single-answer option questions, or too many combinations."""
    names = sorted(q.required_if.names)
    sources = []
    for name in names:
        try:
            src = rubric.question(name)
        except KeyError:
            return None, _("Required for some answers to the questions above.")
        if src.type not in _LISTABLE or src.repeat_over:
            return None, _("Required for some answers to the questions above.")
        sources.append(src)
    combos: list[list[Any]] = [[]]
    for src in sources:
        combos = [[*c, v] for c in combos for v in [None, *src.option_values()]]
        if len(combos) > MAX_WHEN_ROWS:
            return None, _("Required for some answers to the questions above.")
    rows = [c for c in combos if q.required_if.evaluate(dict(zip(names, c, strict=True)))]
    when = {"names": names, "when": [[None if v is None else str(v) for v in row] for row in rows]}
    if len(sources) == 1:
        src = sources[0]
        picked = [row[0] for row in rows if row[0] is not None]
        shown = [_option_name(src, v) for v in picked]
        if shown:
            return when, _("Required when %(question)s is %(answers)s; skipped otherwise.") % {
                "question": src.label,
                "answers": _(" or ").join(shown),
            }
    return when, _("Required for some answers to the questions above; skipped otherwise.")


def _option_name(q: Question, value: Any) -> str:
    """A short name of an option: its value for a scale, else its label up to the first colon
    (BLEnD-Vis: "B (Bad): The image fails ..." -> "B (Bad)"; a translation's full-width colon too)."""
    if q.type in ("scale", "binary"):
        return str(value)
    for o in q.options:
        if o.value == value:
            return re.split("[:：]", o.label, maxsplit=1)[0].strip() or str(value)
    return str(value)


def _reversed_cue(q: Question) -> str:
    """For a scale whose higher points are worse (CULTIVate GT-EXAG, GT-HAL), a cue naming its
    ends; the neighbouring scales (GT-FAITH, realism) run the other way."""
    if not q.reversed or not q.options:
        return ""
    return _("Reversed scale: %(best)s = best, %(worst)s = worst") % {
        "best": q.options[0].value,
        "worst": q.options[-1].value,
    }


def _shown(q: Question, element: Any) -> list[tuple[str, str]]:
    if isinstance(element, dict):
        keys = q.repeat_show or tuple(element)
        labels = q.repeat_show_labels or ("",) * len(keys)
        return [
            (label or k.replace("_", " ").capitalize(), _as_text(element.get(k)))
            for k, label in zip(keys, labels, strict=True)
        ]
    return [("", _as_text(element))]


def _element(q: Question, name: str, value: Any, *, label: str, shown: list) -> dict:
    options = []
    for o in q.options:
        checked = (o.value in value) if isinstance(value, list) else (value is not None and o.value == value)
        option_label = str(PAIR_WORDS[o.value]) if q.type == "pairwise" else o.label
        options.append({"value": o.value, "label": option_label, "key": o.key, "checked": checked})
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
    return render_context(item.data, {k: getattr(item, k) for k in STRATA_KEYS})


def render_context(data: dict[str, Any] | None, strata: dict[str, Any]) -> dict[str, Any]:
    """:func:`item_render_context` of an item read as values (its ``data`` and strata columns),
    for readers of many items that skip building model instances (the annotations import)."""
    ctx = {k: v for k, v in strata.items() if v}
    ctx.update(data or {})
    return ctx


def rubric_wording(request: HttpRequest, rubric: Rubric) -> dict:
    """Which wording of the rubric the annotate page shows: the translation into the UI's language
    when the rubric has one (unless ``?wording=original`` asks for the paper's), else the paper's
    canonical wording. ``locale`` is what the form posts back, to be stored with the answer;
    ``note`` says what the annotator sees, when it is not simply the UI's language."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    available = rubric.pick_locale(language)
    original = request.GET.get("wording") == "original"
    locale = None if original else available
    if locale:
        note = _("This rubric is translated from the paper's original English wording, which is the reference.")
    elif available:
        note = _("Shown in the paper's original English wording.")
    elif language.split("-")[0] != CANONICAL_LOCALE:
        note = _(
            "This rubric has no translation into %(language)s; it is shown in the paper's original English wording."
        ) % {"language": translation.get_language_info(language)["name_local"]}
    else:
        note = ""
    return {
        "rubric": rubric.localized(locale),
        "locale": locale or CANONICAL_LOCALE,
        "translated": bool(locale),
        "switchable": bool(available),
        "note": note,
    }
