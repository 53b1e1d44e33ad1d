"""Judge prompts, built from the same rubric schema the human form uses, plus the papers' own
judge prompts per preset (keyed by preset key, verbatim where the paper gives one).

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

# ---------------------------------------------------------------------------------- papers
# CULTIVate / AHEaD, App. A, Tables 29-31 (MLLM-as-a-Judge prompts), verbatim. The paper's
# {{prompt}} / {{country}} are the item's T2I prompt and country.
_SCORE_FORMAT = (
    "Respond with ONLY the score in the exact format below:\n\nscore is < num >\n\n"
    "Do not include any other text, explanation, or formatting."
)
CULTIVATE_ALIGN = {
    "system": (
        "You are a helpful assistant scoring how well an image depicts an activity as it would typically "
        "appear in the specified country. Provide a rating from 1 to 5 using the guidelines below. Only output "
        "the score in the required format.\n\nScoring Scale:\n\n- 1 = Not well at all (completely wrong or "
        "unrelated)\n- 2 = Slightly relevant\n- 3 = Somewhat accurate\n- 4 = Mostly accurate\n- 5 = Exactly as "
        "expected for this country\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
CULTIVATE_HAL = {
    "system": (
        "You are a helpful assistant scoring whether an image contains incorrect elements with respect to the "
        "mentioned activity and country. Rate on a scale from 1 to 5 using the rules below. Only output the "
        "score in the required format.\n\nScoring Scale:\n\n- 1 = Not at all. All elements seem appropriate.\n"
        "- 2 = Slightly. One minor element seems foreign.\n- 3 = Somewhat. A few elements feel unusual.\n"
        "- 4 = Mostly. Many elements appear incorrect or from another culture.\n- 5 = Strongly. The image is "
        "completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another "
        "country.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
CULTIVATE_EXAG = {
    "system": (
        "You are a helpful assistant scoring how exaggerated an image is in terms of cultural elements (e.g., "
        "attire, objects, background, art/design). Rate on a scale from 1 to 5 using the rules below. Only "
        "output the score in the required format.\n\nScoring Scale:\n\n- 1 = Appropriate and balanced.\n"
        "- 2 = Slightly decorative but within cultural norms.\n- 3 = Several features feel idealized or overly "
        "emphasized.\n- 4 = Many elements feel exaggerated and unrealistic.\n- 5 = Strongly stereotypical, "
        "misleading, or culturally irrelevant.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}

# Cultural Counterfactuals, Table 3: closed-choice classifier prompts, verbatim, by dimension.
COUNTERFACTUAL_CHOICES: dict[str, tuple[str, list[str]]] = {
    "religion": (
        "What type of religious place of worship is depicted in this image? Answer only with one of the "
        "following choices and do not provide any additional commentary: {choices}",
        ["Christian church", "Buddhist temple", "Shinto shrine", "Mosque", "Synagogue", "Hindu temple"],
    ),
    "nationality": (
        "What country is depicted in this image? Answer only with one of the following choices and do not "
        "provide any additional commentary: {choices}",
        ["India", "China", "United States", "Brazil", "South Africa", "Morocco", "Germany", "France"],
    ),
    "socioeconomic": (
        "Based on a global scale, what is the income level of the area depicted in this image? Answer only with "
        "one of the following choices and do not provide any additional commentary: {choices}",
        ["low income", "middle income", "high income"],
    ),
}

# CQ-Bench App. D "Incorporation check prompt" identity and task wording, with the rubric's
# per-value questions and a JSON answer so the same validator reads it.
CQBENCH_SYSTEM = (
    "##Identity\nYou are an expert in culture understanding.\n\n##Task\nYou will be provided a story and values "
    "reflected in the story. Your task is to check if the story reflects values? The story does not mention the "
    "values directly. You will need some reasoning to analyze the story.\n\n{instructions}"
)

# preset key -> (prompt template, parser, judged questions)
PRESET_PROMPTS: dict[str, dict[str, Any]] = {
    "cultivate.faithfulness": {
        "prompt_template": {"per_question": {"faith": CULTIVATE_ALIGN, "hal": CULTIVATE_HAL, "exag": CULTIVATE_EXAG}},
        "parser": "score_is",
        "questions": ["faith", "hal", "exag"],
    },
    "valueground.pair_quality": {
        # App. B.1: the automatic judge is prompted with the same rubric (Sec. 3.3), JSON out.
        "prompt_template": GENERIC_TEMPLATE,
        "parser": "json",
        "questions": ["q1", "q2", "q3", "q4"],
    },
    "cqbench.story": {
        "prompt_template": {"system": CQBENCH_SYSTEM, "user": GENERIC_USER},
        "parser": "json",
        "questions": ["consistency", "reflection", "naturalness", "rewrite_improvement"],
    },
}


def preset_defaults(preset_key: str, rubric: Rubric) -> dict[str, Any]:
    """The paper's prompt for a preset, else the generic rubric prompt over every non-text question."""
    if preset_key in PRESET_PROMPTS:
        return json.loads(json.dumps(PRESET_PROMPTS[preset_key]))
    return {
        "prompt_template": dict(GENERIC_TEMPLATE),
        "parser": "json",
        "questions": [q.id for q in rubric.questions if q.type != "text"],
    }


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
        parts.append(f"  Answer \"left\" for {q.pair[0]}, \"right\" for {q.pair[1]}"
                     + (', or "tie"' if q.allow_tie else "") + ".")
    if q.repeat_over:
        n = rubric.repeat_count(q, item_ctx)
        parts.append(f"  Give a list of {n} answers, one per element of {q.repeat_over}, in order:")
        for i, el in enumerate(item_ctx.get(q.repeat_over) or [], start=1):
            shown = "; ".join(str(el.get(k, "")) for k in q.repeat_show) if isinstance(el, dict) and q.repeat_show else el
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


def prompt_context(rubric: Rubric, questions: Sequence[str], item_ctx: Mapping[str, Any],
                   item_fields: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ctx: dict[str, Any] = {k: v for k, v in item_ctx.items() if not isinstance(v, (list, dict))}
    ctx.update({
        "item": item_text(item_ctx, item_fields),
        "rubric": "\n".join(question_text(rubric, rubric.question(q), item_ctx) for q in questions),
        "schema": json.dumps(answer_schema(rubric, questions, item_ctx), ensure_ascii=False),
        "instructions": rubric.instructions,
    })
    return ctx


def build_messages(template: Mapping[str, Any], rubric: Rubric, questions: Sequence[str],
                   item_ctx: Mapping[str, Any], item_fields: Sequence[Mapping[str, Any]]) -> list[tuple[str | None, str, str]]:
    """(question id or None, system, user) per request for one item."""
    ctx = prompt_context(rubric, questions, item_ctx, item_fields)
    if "per_question" in template:
        out = []
        for qid in questions:
            t = template["per_question"].get(qid)
            if t is None:
                continue
            q = rubric.question(qid)
            qctx = dict(ctx, question=fill_prompt(q.prompt, item_ctx),
                        anchors="\n".join(f"{o.value} = {o.label}" for o in q.options))
            out.append((qid, render(t.get("system", ""), qctx), render(t.get("user", ""), qctx)))
        return out
    return [(None, render(template.get("system", ""), ctx), render(template.get("user", ""), ctx))]


def prompt_hash(*, backend: str, model_id: str, prompt_template: Any, parser: str, questions: Sequence[str],
                params: Mapping[str, Any]) -> str:
    blob = json.dumps(
        {"backend": backend, "model": model_id, "prompt": prompt_template, "parser": parser,
         "questions": list(questions), "params": params},
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()
