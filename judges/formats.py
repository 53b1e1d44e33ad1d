"""Judge prompts that keep a paper's own output contract instead of JSON (template kind
``format``, ``prompts.template_kind``).

Some papers give their judge prompts an output format of their own, e.g. CQ-Bench App. D's
incorporation check ("[Value]:[Reasoning, Yes/No] Values not reflected: [Value]"). Such a
template is ``{"output_format": <name>, "question": <rubric question>, "system": ...,
"user": ...}`` (optionally ``image_labels``): one request per item, whose reply the named
format's parser (``judges/parsers.py``) reads into one verdict per element of the list the
question is repeated over (the story's values). The judge's ``parser`` field stays ``choice``
(one closed verdict per element): the format, not a new parser value, says how to read it.

Placeholders are those of a rubric prompt (``judges/prompts.py``), and every list field of the
item is written out as the paper's prompts show lists: one element per line, an object's
parts joined by "-" (the paper's "[culture]-[value]"); the judged list in the format's own way
(e.g. "[Ground truth 1]: ..." for the value-extraction grader, whose reply names them so)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.rubric import Question, Rubric

from . import parsers, prompts


@dataclass(frozen=True)
class OutputFormat:
    """One paper output contract: where the paper gives it, the rubric question types it can
    answer and the answers it gives (as numbers; the question's options must be exactly these),
    how one judged element is written into the prompt, and the reader of a reply (its text and
    the elements' parts -> one answer per element, in order)."""

    source: str
    question_types: tuple[str, ...]
    answers: tuple[float, ...]
    element: Callable[[int, str], str]
    read: Callable[[str, Sequence[Sequence[str]]], list[float] | list[int]]


FORMATS: dict[str, OutputFormat] = {
    # reflection per value: 1 = Yes (reflected), 0 = No / listed under "Values not reflected"
    "values_reflected": OutputFormat(
        source="CQ-Bench App. D, Incorporation check prompt",
        question_types=("binary",),
        answers=(0.0, 1.0),
        element=lambda n, text: text,
        read=parsers.parse_values_reflected,
    ),
    # consistency per value: 1 = no contradiction reported, 0 = a character contradicts it
    "value_contradictions": OutputFormat(
        source="CQ-Bench App. D, Consistency check prompt",
        question_types=("binary",),
        answers=(0.0, 1.0),
        element=lambda n, text: text,
        read=parsers.parse_value_contradictions,
    ),
    # S(v_i, V^) per ground-truth value: 1 fully / 0.5 partially presented / 0 not mentioned
    "ground_truth_scores": OutputFormat(
        source="CQ-Bench Sec. 4.1 and App. D, LLM evaluation prompt (value extraction)",
        question_types=("choice",),
        answers=parsers.GROUND_TRUTH_SCORES,
        element=lambda n, text: f"[Ground truth {n}]: {text}",
        read=lambda text, values: parsers.parse_ground_truth_scores(text, len(values)),
    ),
}


def output_format(template: Mapping[str, Any]) -> OutputFormat:
    name = template.get("output_format")
    found = FORMATS.get(str(name))
    if found is None:
        raise ValueError(f"unknown output format {name!r}; one of {', '.join(FORMATS)}")
    return found


def check_format_template(template: Mapping[str, Any], rubric: Rubric) -> list[str]:
    """The rubric question a format template answers (as a one-element list); ValueError when
    the template or the question does not fit the format."""
    fmt = output_format(template)
    if not isinstance(template.get("user"), str) or not template["user"].strip():
        raise ValueError("an output-format template needs its user prompt")
    qid = template.get("question")
    try:
        q = rubric.question(str(qid))
    except KeyError:
        raise ValueError(f"the template answers {qid!r}, which is no question of this rubric") from None
    if not q.repeat_over or q.type not in fmt.question_types:
        raise ValueError(
            f"the {template['output_format']} format ({fmt.source}) answers a {' or '.join(fmt.question_types)} "
            f"question asked per element of a list; {q.id} is a {'repeated ' if q.repeat_over else ''}{q.type} question"
        )
    values = q.option_values()
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values) or sorted(
        float(v) for v in values
    ) != sorted(fmt.answers):
        raise ValueError(
            f"the {template['output_format']} format answers {', '.join(f'{a:g}' for a in fmt.answers)}; "
            f"{q.id}'s options are {', '.join(map(str, values))}"
        )
    return [q.id]


def _parts(element: Any, keys: Sequence[str]) -> tuple[str, ...]:
    if isinstance(element, Mapping):
        keys = list(keys) or list(element)
        return tuple(str(element.get(k, "")) for k in keys)
    return (str(element),)


def _judged(template: Mapping[str, Any], rubric: Rubric, item_ctx: Mapping[str, Any]) -> tuple[Question, list]:
    check_format_template(template, rubric)
    q = rubric.question(str(template["question"]))
    elements = item_ctx.get(q.repeat_over)
    if not isinstance(elements, list) or not elements:
        raise ValueError(f"the item has no {q.repeat_over} to judge")
    return q, elements


def format_messages(
    template: Mapping[str, Any],
    rubric: Rubric,
    item_ctx: Mapping[str, Any],
    item_fields: Sequence[Mapping[str, Any]],
) -> tuple[str, str]:
    """(system, user) of one item; ValueError when the item has nothing to judge."""
    fmt = output_format(template)
    q, elements = _judged(template, rubric, item_ctx)
    ctx = prompts.prompt_context(rubric, [q.id], item_ctx, item_fields)
    keys = {str(f.get("name")): list(f.get("keys") or []) for f in item_fields}
    for name, value in item_ctx.items():
        if isinstance(value, list) and name != q.repeat_over:
            ctx[name] = "\n".join(parsers.value_text(_parts(el, keys.get(name, []))) for el in value)
    ctx[q.repeat_over] = "\n".join(
        fmt.element(n, parsers.value_text(_parts(el, q.repeat_show))) for n, el in enumerate(elements, start=1)
    )
    return prompts.render(str(template.get("system") or ""), ctx), prompts.render(str(template["user"]), ctx)


def read_format_reply(
    template: Mapping[str, Any], rubric: Rubric, item_ctx: Mapping[str, Any], text: str
) -> dict[str, Any]:
    """The rubric answer of one reply: ``{question: [one option value per element]}``;
    ``parsers.ParseError`` when the reply breaks the format."""
    fmt = output_format(template)
    q, elements = _judged(template, rubric, item_ctx)
    found = fmt.read(text, [_parts(el, q.repeat_show) for el in elements])
    by_number = {float(v): v for v in q.option_values()}  # the option's own value: 1, not 1.0
    return {q.id: [by_number[float(x)] for x in found]}
