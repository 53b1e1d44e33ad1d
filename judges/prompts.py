"""Judge prompts, built from the same rubric schema the human form uses. The papers' own judge
prompts (verbatim where the paper gives one), named templates and closed-choice question banks
belong to their protocol and are declared on its preset (``benchmarks/<protocol>.py``:
``Preset.judge_prompt``, ``named_templates``, ``classifier_bank``); this module is the
protocol-independent machinery that fills and checks them.

A prompt template is ``{"system": str, "user": str}`` (one request answers every judged
question) or ``{"per_question": {qid: {"system", "user"}}}`` (one request per question, as in
CULTIVate's separate ALIGN / HAL / EXAG prompts). Placeholders ``{name}`` are filled with the
item's fields and strata, plus ``{item}`` (the item as text), ``{rubric}`` (questions with
their anchors), ``{schema}`` (the JSON schema of the answer), ``{instructions}`` (the rubric's
protocol text), and for per-question prompts ``{question}``, ``{anchors}``. An unknown
placeholder stays as written."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from annotation.rubric import Question, Rubric, fill_prompt
from benchmarks.base import ClassifierBank, Preset
from benchmarks.registry import PRESETS, named_templates

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")

GENERIC_SYSTEM = (
    "You are an impartial evaluator applying a human annotation rubric. Apply it exactly as a "
    "careful human annotator would.\n\n{instructions}"
)
GENERIC_USER = (
    "{item}\n\nAnswer these questions:\n{rubric}\n\n"
    "Return JSON only (no commentary), one key per question id, matching this JSON schema:\n{schema}"
)
GENERIC_TEMPLATE = {"system": GENERIC_SYSTEM, "user": GENERIC_USER}


def choices_text(choices: Sequence[str]) -> str:
    """The list as Table 3 prints it: ['Christian church', 'Buddhist temple', ...]."""
    return "[" + ", ".join(f"'{c}'" for c in choices) + "]"


# A closed-choice classifier judge (template form ``{"classifiers": [...], "flags": [...]}``):
# each classifier asks one question of the preset's classifier bank (``ask``: a bank key, or
# ``context`` = the item's dimension, from its ``dimension`` stratum or the bank's context
# question whose choices hold the item's ``expected`` label; or an explicit ``prompt`` with
# ``choices``) about one image of the item and is *wrong* when its answer differs from the
# item's ``expected`` field. Each flag rule ticks ``flag`` of the checklist ``question`` when
# any classifier in ``if_wrong`` is wrong and none in ``unless_wrong`` is. The classifiers'
# answers are kept beside the flags (``LABELS_KEY``). A label template (``{"label", "labels",
# "system", "user"}``) is a judge whose output is a label outside the rubric.
LABELS_KEY = "_labels"  # where a judge's classifier labels sit in its parsed output
NO_BANK = ClassifierBank(source="closed-choice", questions={})


def named_template(name: str) -> Mapping[str, Any] | None:
    """The template some preset declares under this name (``Preset.named_templates``)."""
    named = named_templates().get(name)
    return None if named is None else named.template


def classifier_bank(preset_key: str) -> ClassifierBank:
    """The closed-choice questions the preset's classifier templates ask (none for an unknown key)."""
    preset = PRESETS.get(preset_key)
    return (preset.classifier_bank if preset else None) or NO_BANK


def template_kind(template: Mapping[str, Any]) -> str:
    """``rubric`` (system/user or per_question), ``classifiers``, ``label`` or ``format`` (a
    paper's prompt read by its own output format, ``judges/formats.py``)."""
    if "classifiers" in template:
        return "classifiers"
    if "labels" in template:
        return "label"
    if "output_format" in template:
        return "format"
    return "rubric"


def image_labels(
    template: Mapping[str, Any], rubric: Rubric, item_fields: Sequence[Mapping[str, Any]], fields: Sequence[str]
) -> list[str]:
    """What is said right before each attached image (``fields``, in order): "Image A", or "".

    A template's ``image_labels`` (``{field: label}``) decides. Otherwise, when the rubric names
    an attached image by its item field's label (ValueGround's Q1 asks about "Image A", Q2 about
    "Image B"), every attached image is introduced by its field's label, as the paper's own
    prompts do ("Image A: [IMAGE_A]" / "Image B: [IMAGE_B]", the ValueGround paper's App. C.2): images
    sent unlabelled cannot be told apart. A rubric that names no image ("this image") gets none."""
    given = template.get("image_labels")
    if isinstance(given, Mapping) and given:
        return [str(given.get(f) or "") for f in fields]
    labels = {str(s.get("name")): str(s.get("label") or "") for s in item_fields}
    text = rubric_text(rubric).casefold()
    if not any(labels.get(f) and labels[f].casefold() in text for f in fields):
        return ["" for _ in fields]
    return [labels.get(f) or f for f in fields]


def rubric_text(rubric: Rubric) -> str:
    """Every text of the rubric a judge reads: instructions, labels, prompts, help, anchors."""
    parts = [rubric.instructions]
    for q in rubric.questions:
        parts += [q.label, q.prompt, q.help, *(o.label for o in q.options)]
    return "\n".join(p for p in parts if p)


def template_placeholders(text: str) -> list[str]:
    return list(dict.fromkeys(_PLACEHOLDER.findall(text or "")))


def classifier_question(
    spec_entry: Mapping[str, Any], item_ctx: Mapping[str, Any], bank: ClassifierBank
) -> tuple[str, list[str]]:
    """(prompt, choices) of one closed-choice classifier for one item; ValueError when the item
    gives no closed list (e.g. a context label in none of the bank's context lists)."""
    if spec_entry.get("prompt"):
        choices = list(spec_entry.get("choices") or [])
        return render(spec_entry["prompt"], {"choices": choices_text(choices)}), choices
    ask = spec_entry.get("ask", "context")
    if ask == "context":
        dim = str(item_ctx.get("dimension") or "").lower()
        if dim not in bank.context:
            label = str(item_ctx.get(spec_entry.get("expected", "context_label")) or "").lower()
            dims = [d for d in bank.context if label in {c.lower() for c in bank.questions[d].choices}]
            if len(dims) != 1:
                raise ValueError(
                    f"no {bank.source} context question for dimension {item_ctx.get('dimension')!r} "
                    f"and context label {item_ctx.get(spec_entry.get('expected', 'context_label'))!r}"
                )
            dim = dims[0]
        ask = dim
    if ask not in bank.questions:
        raise ValueError(f"no {bank.source} question {ask!r}")
    question = bank.questions[ask]
    return render(question.prompt, {"choices": choices_text(question.choices)}), list(question.choices)


def check_classifier_template(
    template: Mapping[str, Any], rubric: Rubric, bank: ClassifierBank
) -> tuple[list[str], list[str]]:
    """(judged question ids, flags it can tick) of a classifier template; ValueError if malformed."""
    classifiers = template.get("classifiers")
    if not isinstance(classifiers, list) or not classifiers:
        raise ValueError("a classifier template needs a non-empty list of classifiers")
    ids = []
    for c in classifiers:
        if not isinstance(c, Mapping) or not c.get("id") or not c.get("image") or not c.get("expected"):
            raise ValueError("each classifier needs an id, an image field and an expected field")
        if c.get("prompt") and not c.get("choices"):
            raise ValueError(f"classifier {c['id']}: a prompt needs its choices")
        if not c.get("prompt") and c.get("ask", "context") not in ("context", *bank.questions):
            raise ValueError(f"classifier {c['id']}: ask one of context, {', '.join(bank.questions)}")
        ids.append(c["id"])
    if len(set(ids)) != len(ids):
        raise ValueError("classifier ids must be unique")
    rules = template.get("flags")
    if not isinstance(rules, list) or not rules:
        raise ValueError("a classifier template needs flag rules")
    questions: list[str] = []
    flags: list[str] = []
    for r in rules:
        qid = r.get("question")
        try:
            q = rubric.question(qid)
        except KeyError:
            raise ValueError(f"flag rule for unknown question {qid!r}") from None
        if q.type != "checklist" or r.get("flag") not in q.option_values():
            raise ValueError(f"{r.get('flag')!r} is not an option of the checklist {qid}")
        unknown = [x for x in [*r.get("if_wrong", []), *r.get("unless_wrong", [])] if x not in ids]
        if not r.get("if_wrong") or unknown:
            raise ValueError(f"flag {r['flag']}: if_wrong must name classifiers ({', '.join(unknown) or 'none'})")
        if qid not in questions:
            questions.append(qid)
        flags.append(r["flag"])
    return questions, flags


def preset_defaults(preset: Preset | None, rubric: Rubric) -> dict[str, Any]:
    """Prompt template, parser and questions of a new LLM / VLM judge: the preset's paper prompt
    (``Preset.judge_prompt``), else the generic rubric prompt over every non-text question."""
    paper = preset.judge_prompt if preset is not None else None
    if paper is None:
        return {
            "prompt_template": dict(GENERIC_TEMPLATE),
            "parser": "json",
            "questions": [q.id for q in rubric.questions if q.type != "text"],
        }
    template = dict(paper.template or {})
    if not any(k in template for k in ("per_question", "classifiers", "labels", "output_format")):
        template = {**GENERIC_TEMPLATE, **template}  # a system / user prompt: the generic part where none given
    return json.loads(
        json.dumps({"prompt_template": template, "parser": paper.parser, "questions": list(paper.questions)})
    )


# ---------------------------------------------------------------------------------- builder
def render(template: str, context: Mapping[str, Any]) -> str:
    def repl(m: re.Match[str]) -> str:
        val = context.get(m.group(1))
        if val is None:
            return m.group(0)
        return val if isinstance(val, str) else json.dumps(val, ensure_ascii=False)

    return _PLACEHOLDER.sub(repl, template)


def item_text(item_ctx: Mapping[str, Any], item_fields: Sequence[Mapping[str, Any]]) -> str:
    """The item as an annotator reads it (images are attached separately; hint and hidden
    fields are left out, as for annotators with hints off)."""
    lines = []
    for f in item_fields:
        if f.get("display") is False or f.get("hint") or f["type"] == "image":
            continue
        val = item_ctx.get(f["name"])
        if val in (None, "", []):
            continue
        label = f.get("label", f["name"])
        if isinstance(val, list):
            lines.append(f"{label}:")
            for i, el in enumerate(val, start=1):
                el_text = "; ".join(f"{k}: {v}" for k, v in el.items()) if isinstance(el, dict) else str(el)
                lines.append(f"  {i}. {el_text}")
        elif isinstance(val, dict):
            lines.append(f"{label}: {json.dumps(val, ensure_ascii=False)}")
        else:
            lines.append(f"{label}: {val}")
    for key in ("country", "region"):
        if item_ctx.get(key) and not any(f["name"] == key for f in item_fields):
            lines.append(f"{key.capitalize()}: {item_ctx[key]}")
    return "\n".join(lines)


def question_text(rubric: Rubric, q: Question, item_ctx: Mapping[str, Any]) -> str:
    head = f"- {q.id} ({q.label}): {fill_prompt(q.prompt, item_ctx)}".rstrip()
    parts = [head]
    if q.help:
        parts.append(f"  Note: {q.help}")
    if q.options and q.type != "pairwise":
        parts.append("  " + ("Tick any of" if q.type == "checklist" else "Answer with one of") + ":")
        parts.extend(f"    {json.dumps(o.value, ensure_ascii=False)} = {o.label}" for o in q.options)
    if q.type == "pairwise" and q.pair:
        # by position, never by field name: a name can give the answer away (human_utterance),
        # and a pair asked in both orders (``judges/orders.py``) must read the same both times
        parts.append(
            '  Answer "left" for the first of the two as shown above, "right" for the second'
            + (', or "tie"' if q.allow_tie else "")
            + "."
        )
    if q.repeat_over:
        n = rubric.repeat_count(q, item_ctx)
        parts.append(f"  Give a list of {n} answers, one per element of {q.repeat_over}, in order:")
        for i, el in enumerate(item_ctx.get(q.repeat_over) or [], start=1):
            shown = (
                "; ".join(str(el.get(k, "")) for k in q.repeat_show) if isinstance(el, dict) and q.repeat_show else el
            )
            parts.append(f"    {q.repeat_label.format(n=i)}: {shown}")
    return "\n".join(parts)


def answer_schema(rubric: Rubric, questions: Sequence[str], item_ctx: Mapping[str, Any]) -> dict[str, Any]:
    """JSON schema of the judge's answer object (used for constrained decoding where the
    server supports it); the rubric validator remains the judge of what is valid."""
    props: dict[str, Any] = {}
    for qid in questions:
        q = rubric.question(qid)
        if q.type in ("scale", "binary"):
            one: dict[str, Any] = {"type": "integer", "enum": list(q.option_values())}
        elif q.type == "choice":
            one = {"enum": list(q.option_values())}
        elif q.type == "pairwise":
            one = {"type": "string", "enum": [o.value for o in q.options]}
        elif q.type == "checklist":
            one = {"type": "array", "items": {"enum": list(q.option_values())}, "uniqueItems": True}
        else:
            one = {"type": "string"}
        if q.repeat_over:
            n = rubric.repeat_count(q, item_ctx)
            one = {"type": "array", "items": one, "minItems": n, "maxItems": n}
        props[qid] = one
    return {"type": "object", "properties": props, "required": list(questions), "additionalProperties": False}


def prompt_context(
    rubric: Rubric, questions: Sequence[str], item_ctx: Mapping[str, Any], item_fields: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    ctx: dict[str, Any] = {k: v for k, v in item_ctx.items() if not isinstance(v, (list, dict))}
    ctx.update(
        {
            "item": item_text(item_ctx, item_fields),
            "rubric": "\n".join(question_text(rubric, rubric.question(q), item_ctx) for q in questions),
            "schema": json.dumps(answer_schema(rubric, questions, item_ctx), ensure_ascii=False),
            "instructions": rubric.instructions,
        }
    )
    return ctx


def build_messages(
    template: Mapping[str, Any],
    rubric: Rubric,
    questions: Sequence[str],
    item_ctx: Mapping[str, Any],
    item_fields: Sequence[Mapping[str, Any]],
) -> list[tuple[str | None, str, str]]:
    """(question id or None, system, user) per request for one item."""
    ctx = prompt_context(rubric, questions, item_ctx, item_fields)
    if "per_question" in template:
        out = []
        for qid in questions:
            t = template["per_question"].get(qid)
            if t is None:
                continue
            q = rubric.question(qid)
            qctx = dict(
                ctx,
                question=fill_prompt(q.prompt, item_ctx),
                anchors="\n".join(f"{o.value} = {o.label}" for o in q.options),
            )
            out.append((qid, render(t.get("system", ""), qctx), render(t.get("user", ""), qctx)))
        return out
    return [(None, render(template.get("system", ""), ctx), render(template.get("user", ""), ctx))]


def prompt_hash(
    *,
    backend: str,
    model_id: str,
    prompt_template: Any,
    parser: str,
    questions: Sequence[str],
    params: Mapping[str, Any],
) -> str:
    blob = json.dumps(
        {
            "backend": backend,
            "model": model_id,
            "prompt": prompt_template,
            "parser": parser,
            "questions": list(questions),
            "params": params,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()
