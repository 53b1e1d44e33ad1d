"""How a judge's passes (and an ensemble's members) combine into one answer per item.

- ``mean`` (ValueGround: the two judges' scores are averaged): numeric answers are averaged;
  the stored rubric answer is the option nearest to the mean (ties go to the higher option),
  and the exact means are kept beside it. Non-numeric answers fall back to the majority.
- ``majority``: the most frequent answer (ties: the first pass's answer among the tied);
  checklists flag by flag (ticked when more than half of the passes tick it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from annotation.rubric import Question, Rubric


def _majority(values: Sequence[Any]) -> Any:
    counts = Counter(map(_key, values))
    best = max(counts.values())
    for v in values:
        if counts[_key(v)] == best:
            return v
    return None  # pragma: no cover


def _key(v: Any) -> str:
    return repr(v)


def _nearest(q: Question, x: float) -> int:
    opts = sorted(q.option_values())
    return min(opts, key=lambda o: (abs(o - x), -o))


def _combine_one(q: Question, values: Sequence[Any], how: str) -> tuple[Any, float | None]:
    present = [v for v in values if v is not None]
    if not present:
        return None, None
    if q.type == "checklist":
        flags = [o for o in q.option_values() if sum(o in v for v in present) * 2 > len(present)]
        return flags, None
    numeric = q.type in ("scale", "binary") and all(isinstance(v, (int, float)) for v in present)
    if how == "mean" and numeric:
        mean = sum(present) / len(present)
        return _nearest(q, mean), mean
    return _majority(present), None


def combine(
    rubric: Rubric,
    questions: Sequence[str],
    answers: Sequence[dict[str, Any]],
    how: str,
    unrounded: Sequence[dict[str, Any] | None] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(answers for the rubric validator, exact means where they differ from the stored answer).

    ``unrounded``: per pass, the unrounded scores a prompt-less judge computed on a question's
    scale (``Verdict.exact``, e.g. AHEaD's FAITH as 1 + 4 x). Where every pass has one they are
    averaged instead of the passes' rounded options, whatever ``how`` says (a majority of
    continuous scores would throw them away), and the stored answer is the option nearest the
    mean, as for ``mean``."""
    out: dict[str, Any] = {}
    exact: dict[str, Any] = {}
    for qid in questions:
        q = rubric.question(qid)
        per_pass = [a.get(qid) for a in answers]
        scores = [u.get(qid) for u in unrounded if u]
        if (
            not q.repeat_over
            and q.type in ("scale", "binary")
            and answers
            and len(scores) == len(answers)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores)
        ):
            m = sum(scores) / len(scores)
            out[qid] = _nearest(q, m)
            if m != out[qid]:
                exact[qid] = m
            continue
        if q.repeat_over:
            lists = [v for v in per_pass if isinstance(v, list)]
            n = max((len(v) for v in lists), default=0)
            combined, means = [], []
            for i in range(n):
                c, m = _combine_one(q, [v[i] for v in lists if len(v) > i], how)
                combined.append(c)
                means.append(m if m is not None else c)
            out[qid] = combined
            if any(m != c for m, c in zip(means, combined, strict=True)):
                exact[qid] = means
        else:
            c, m = _combine_one(q, per_pass, how)
            out[qid] = c
            if m is not None and m != c:
                exact[qid] = m
    return out, exact


def combine_metrics(per_pass: Sequence[dict[str, Any] | None]) -> dict[str, float]:
    """A judge's numbers outside the rubric (``Verdict.metrics``) over its passes: the mean of
    each metric over the passes that have it."""
    values: dict[str, list[float]] = {}
    for metrics in per_pass:
        for name, v in (metrics or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                values.setdefault(name, []).append(float(v))
    return {name: sum(vs) / len(vs) for name, vs in values.items()}
