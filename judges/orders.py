"""Both orders of a pairwise item (a judge's position-bias check), as the preset declares them
(``benchmarks.base.PairOrder``): the item shown swapped, a swapped answer mapped back to the
item's own order, and the verdict (which member the judge preferred) read from an answer.

Pure: no models. A swapped run's output is stored mapped back (``JudgeOutput.parsed`` is always
in the item's own order; ``raw_output`` keeps what the model said about the swapped pair), so
the rubric validator, the statistics and the page read every output alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from annotation.rubric import Rubric
from benchmarks.base import PairOrder
from hvstats.bias import TIE, A, B

from .backends import JudgeItem

ORIGINAL, SWAPPED = "original", "swapped"


def swapped_item(item: JudgeItem, order: PairOrder) -> JudgeItem:
    """The item with each declared pair of fields exchanged (text and images alike)."""
    context = dict(item.context)
    images = dict(item.images)
    for a, b in order.fields:
        for values in (context, images):
            va, vb = values.get(a), values.get(b)
            values.pop(a, None)
            values.pop(b, None)
            if vb is not None:
                values[a] = vb
            if va is not None:
                values[b] = va
    return replace(item, context=context, images=images)


def map_back(answers: Mapping[str, Any] | None, order: PairOrder) -> dict[str, Any] | None:
    """A swapped order's answers in the item's own order (the swap is its own inverse)."""
    if answers is None:
        return None
    out = dict(answers)
    for qa, qb in order.swap_questions:
        if qa in answers or qb in answers:
            out.pop(qa, None)
            out.pop(qb, None)
            if qb in answers:
                out[qa] = answers[qb]
            if qa in answers:
                out[qb] = answers[qa]
    for qid, (first, second) in order.swap_values.items():
        if qid in out:
            out[qid] = {first: second, second: first}.get(out[qid], out[qid])
    return out


def verdict(answers: Mapping[str, Any] | None, order: PairOrder) -> str | None:
    """Which member of the pair an answer (in the item's own order) prefers: ``A`` (the declared
    first), ``B`` or ``TIE``; None without an answer."""
    if not answers:
        return None
    if len(order.verdict) == 1:
        qid = order.verdict[0]
        value = answers.get(qid)
        if value is None:
            return None
        first, second = order.swap_values[qid]
        return A if value == first else B if value == second else TIE
    qa, qb = order.verdict
    sa, sb = answers.get(qa), answers.get(qb)
    if not isinstance(sa, (int, float)) or not isinstance(sb, (int, float)):
        return None
    return A if sa > sb else B if sb > sa else TIE


def order_questions(order: PairOrder) -> set[str]:
    """Every question whose answer the swap touches or the verdict reads."""
    return {*order.verdict, *(q for pair in order.swap_questions for q in pair), *order.swap_values}


def check_pair_order(order: PairOrder, rubric: Rubric, item_fields: Sequence[Mapping[str, Any]]) -> list[str]:
    """What is wrong with a preset's declaration (empty: nothing)."""
    problems = []
    names = {f["name"]: f for f in item_fields}
    for a, b in order.fields:
        if a not in names or b not in names:
            problems.append(f"fields {a!r} / {b!r} are not both item fields")
        elif names[a]["type"] != names[b]["type"]:
            problems.append(f"fields {a!r} and {b!r} are of different types")
    if not order.fields:
        problems.append("no fields to exchange")
    known = {q.id: q for q in rubric.questions}
    for qid in sorted(order_questions(order)):
        if qid not in known:
            problems.append(f"unknown question {qid!r}")
    for qa, qb in order.swap_questions:
        if qa in known and qb in known:
            a, b = known[qa], known[qb]
            if a.type != b.type or list(a.option_values()) != list(b.option_values()):
                problems.append(f"questions {qa!r} and {qb!r} exchange answers but differ in type or options")
    for qid, pair in order.swap_values.items():
        if qid in known and (len(pair) != 2 or not set(pair) <= set(known[qid].option_values())):
            problems.append(f"swap values of {qid!r} must be two of its options")
    if len(order.verdict) == 1:
        if order.verdict[0] not in order.swap_values:
            problems.append("a one-question verdict needs its (first, second) values in swap_values")
    elif len(order.verdict) == 2:
        for qid in order.verdict:
            if qid in known and known[qid].type not in ("scale", "binary"):
                problems.append(f"a two-question verdict compares scores: {qid!r} is not a scale")
        if tuple(order.verdict) not in {tuple(p) for p in order.swap_questions}:
            problems.append("the two verdict questions must exchange their answers (swap_questions)")
    else:
        problems.append("the verdict is one question or two")
    return problems


__all__ = [
    "ORIGINAL",
    "SWAPPED",
    "check_pair_order",
    "map_back",
    "order_questions",
    "swapped_item",
    "verdict",
]
