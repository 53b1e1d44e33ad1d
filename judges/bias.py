"""The bias checks of one judge run, read from its stored outputs (the statistics are
``hvstats.bias``; this module only gathers their inputs):

- **position** (judges asked in both orders, ``JudgeConfig.both_orders``): the verdict of the
  first pass in each order (``judges/orders.py``), position consistency and the first-position
  rate with its binomial test. Later passes are left out, so each item counts once per order;
- **stability** (judges with two passes or more): per judged question, the original-order
  passes as an items x passes matrix, percent agreement and Krippendorff's alpha (ordinal for
  scale questions, nominal otherwise);
- **verbosity** (text judges: items with no image field): per numeric judged question,
  Spearman's rho of the judge's rating with the item's length in characters (its displayed text
  fields) beside the same for the humans' mean answer on the same items;
- **length choice** (pairwise questions over two text fields, e.g. CQ-Bench's Turing pairs): the
  share of the judge's decisive choices (first pass, original order) that picked the longer
  text, beside the same share of the humans' answers on the same items (their choice resolved
  through the order each was shown).

Every check is ``None`` where it does not apply; a statistic that is undefined for the data says
why (``reason``).

The run page shows the checks on every visit, and their bootstrap CIs cost seconds on a large
run (verbosity: about 0.5 s per question at 1,000 items, 4 s at 5,000). The statistics are
seeded, so equal inputs give equal results: each is cached under a digest of its inputs
(:func:`_memo`). New outputs or new human answers change the inputs, hence the key: nothing is
ever invalidated by hand, and a stale result cannot be served."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from django.core.cache import cache
from django.utils.translation import gettext_noop

from annotation.models import Annotation, Assignment, Rater
from annotation.rubric import PAIR_SIDES, Question, resolve_pair_choice
from hvstats import bias
from hvstats.result import to_jsonable

from . import orders
from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from .outputs import rubric_part
from .registry import is_ensemble

STABLE_TYPES = ("scale", "binary", "choice", "pairwise")
NUMERIC_TYPES = ("scale", "binary")
#: how long a computed check stays cached (its key changes whenever its inputs do)
MEMO_SECONDS = 7 * 24 * 3600


def _memo(statistic: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``statistic(*args, **kwargs)`` as JSON-ready data, from the cache when the same statistic
    was computed on the same inputs before (keyed by a SHA-256 of its name and inputs)."""
    inputs = json.dumps([statistic.__name__, to_jsonable([args, kwargs])], sort_keys=True, allow_nan=True)
    key = "judge-bias:" + hashlib.sha256(inputs.encode()).hexdigest()
    hit = cache.get(key)
    if hit is None:
        hit = to_jsonable(statistic(*args, **kwargs))
        cache.set(key, hit, MEMO_SECONDS)
    return hit


def run_bias_checks(run: JudgeRun, *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The checks as JSON-ready data (see the module docstring)."""
    config = run.config
    rubric = run.project.rubric_version.parsed()
    outputs = list(
        JudgeOutput.objects.filter(run=run, member__isnull=True)
        .order_by()
        .values_list("item_id", "pass_index", "order", "parsed", "error")
    )
    answers: dict[tuple[int, int, str], dict | None] = {
        (item, p, order): (None if error else rubric_part(parsed)) for item, p, order, parsed, error in outputs
    }
    items = list(run.item_ids)
    out: dict[str, Any] = {"both_orders": config.both_orders, "passes": config.passes}
    out["position"] = _position(run, items, answers, n_boot, seed)
    out["stability"] = _stability(config, rubric, items, answers, n_boot, seed)
    out["verbosity"] = _verbosity(run, rubric, n_boot, seed)
    out["length_choice"] = _length_choice(run, rubric, items, answers)
    return to_jsonable(out)


def _position(run: JudgeRun, items: list[int], answers: dict, n_boot: int, seed: int) -> dict[str, Any] | None:
    order = run.project.preset.pair_order
    if not run.config.both_orders or order is None:
        return None
    original = [orders.verdict(answers.get((i, 0, orders.ORIGINAL)), order) for i in items]
    swapped = [orders.verdict(answers.get((i, 0, orders.SWAPPED)), order) for i in items]
    return {
        "verdict": list(order.verdict),
        "consistency": _memo(bias.position_consistency, original, swapped, n_boot=n_boot, seed=seed),
        "first_position_rate": bias.first_position_rate(original, swapped),
    }


def _stability(
    config: JudgeConfig, rubric: Any, items: list[int], answers: dict, n_boot: int, seed: int
) -> list[dict[str, Any]] | None:
    if config.passes < 2 or is_ensemble(config.backend):
        return None
    out = []
    for k, qid in enumerate(config.questions):
        q = rubric.question(qid)
        if q.type not in STABLE_TYPES or q.repeat_over:
            continue
        codes = {v: float(i) for i, v in enumerate(q.option_values())}
        X = np.full((len(items), config.passes), np.nan)
        for r, item in enumerate(items):
            for p in range(config.passes):
                value = (answers.get((item, p, orders.ORIGINAL)) or {}).get(qid)
                if q.type in NUMERIC_TYPES and isinstance(value, (int, float)) and not isinstance(value, bool):
                    X[r, p] = float(value)
                elif value in codes:
                    X[r, p] = codes[value]
        level = "ordinal" if q.type == "scale" else "nominal"
        res = _memo(bias.pass_stability, X, level=level, n_boot=n_boot, seed=seed + 10 * k)
        out.append({"question": qid, "level": level, **res})
    return out


def item_length(data: dict[str, Any], item_fields: list[dict[str, Any]]) -> int:
    """Characters of the text an annotator reads: the displayed text / longtext fields."""
    return sum(
        len(str(data.get(f["name"]) or ""))
        for f in item_fields
        if f["type"] in ("text", "longtext") and f.get("display") is not False and not f.get("hint")
    )


def _verbosity(run: JudgeRun, rubric: Any, n_boot: int, seed: int) -> dict[str, Any] | None:
    preset = run.project.preset
    numeric = [
        q
        for q in run.config.questions
        if rubric.question(q).type in NUMERIC_TYPES and not rubric.question(q).repeat_over
    ]
    if preset.image_fields() or not numeric:
        return None  # an image judge, or no score to correlate
    results = {
        item: (answers or {})
        for item, answers in run.results.filter(status=JudgeItemResult.Status.OK).values_list("item_id", "answers")
    }
    ids = list(run.item_ids)
    data = dict(run.project.items.filter(pk__in=ids).values_list("id", "data"))
    human: dict[tuple[int, str], list[float]] = defaultdict(list)
    for item, values in Annotation.objects.filter(
        item_id__in=ids,
        rater__kind=Rater.Kind.HUMAN,
        assignment__purpose=Assignment.Purpose.REGULAR,
        assignment__status=Assignment.Status.SUBMITTED,
    ).values_list("item_id", "answers"):
        for qid in numeric:
            v = (values or {}).get(qid)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                human[(item, qid)].append(float(v))
    lengths = [item_length(data.get(i) or {}, preset.item_fields) for i in ids]
    per_question = []
    for k, qid in enumerate(numeric):
        judge = [_number((results.get(i) or {}).get(qid)) for i in ids]
        humans = [float(np.mean(human[(i, qid)])) if human.get((i, qid)) else None for i in ids]
        res = _memo(bias.verbosity, lengths, judge, humans, n_boot=n_boot, seed=seed + 10 * k)
        per_question.append({"question": qid, **res})
    # in English (the API's words); the run page translates it
    return {"length": gettext_noop("characters of the item's displayed text fields"), "questions": per_question}


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


__all__ = ["item_length", "run_bias_checks"]


def _length_choice(run: JudgeRun, rubric: Any, items: list[int], answers: dict) -> dict[str, Any] | None:
    texts = {f["name"] for f in run.project.preset.item_fields if f["type"] in ("text", "longtext")}
    questions = [
        q
        for q in (rubric.question(qid) for qid in run.config.questions)
        if q.type == "pairwise" and q.pair is not None and set(q.pair) <= texts
    ]
    if not questions:
        return None
    data = dict(run.project.items.filter(pk__in=items).values_list("id", "data"))
    human = list(
        Annotation.objects.filter(
            item_id__in=items,
            rater__kind=Rater.Kind.HUMAN,
            assignment__purpose=Assignment.Purpose.REGULAR,
            assignment__status=Assignment.Status.SUBMITTED,
        ).values_list("item_id", "answers", "assignment__presentation")
    )
    out = []
    for q in questions:
        judge = [
            _chose_longer(q, (answers.get((i, 0, orders.ORIGINAL)) or {}).get(q.id), None, data.get(i) or {})
            for i in items
        ]
        humans = [_chose_longer(q, (a or {}).get(q.id), shown, data.get(i) or {}) for i, a, shown in human]
        out.append(
            {
                "question": q.id,
                "pair": list(q.pair or ()),
                "judge": _memo(bias.longer_choice_rate, judge),
                "humans": _memo(bias.longer_choice_rate, humans),
            }
        )
    return {"length": gettext_noop("characters of each text of the pair"), "questions": out}


def _chose_longer(q: Question, side: Any, presentation: dict | None, data: dict[str, Any]) -> bool | None:
    """Whether an answer to pairwise ``q`` chose the longer text of the item's pair; None for a
    tie, no answer or texts of equal length."""
    if side not in PAIR_SIDES:
        return None
    field = resolve_pair_choice(q, side, presentation)
    first, second = q.pair or ("", "")
    la, lb = len(str(data.get(first) or "")), len(str(data.get(second) or ""))
    if la == lb:
        return None
    return field == (first if la > lb else second)
