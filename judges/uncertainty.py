"""A judge's uncertainty per item, the input of an active sample (``studies/active.py``):
``{item_id: u >= 0}``, where a larger ``u`` means people are more likely to disagree with the
judge on that item (the optimal rule wants the judge's root expected squared error, up to a
constant factor).

Sources (``source`` keys):

- ``passes``: the spread of the judge's answers to ``field`` over its passes, an ensemble's
  members (original order only: a pairwise item's swapped order is not a second opinion
  on the same question as shown): the standard deviation (divisor n) of the numeric
  answers of its original-order outputs (for a 0/1 answer, ``sqrt(p (1 - p))`` with ``p`` the
  share of passes answering 1: the binary rule of the paper). Items with fewer than two answers
  have none.
- ``confidence:<metric>``: a verbalised or computed confidence in [0, 1] stored with the judge's
  rating (``derived["judge_metrics"]``: a backend's metric, or a column imported with judge
  outputs, ``judges/imported.py``): ``u = 1 - confidence`` (values outside [0, 1] clipped).
- ``uncertainty:<metric>``: such a metric read as the uncertainty itself (entropy of label
  probabilities, a token log-probability spread, a variance), negative values refused.
- ``uniform``: the same value for every item the judge rated (the uniform design, a baseline).
"""

from __future__ import annotations

import math
from typing import Any

from django.db.models import Count

from annotation.answers import METRICS_KEY
from annotation.models import Annotation, Assignment, Project, Rater
from core.errors import DomainError

from .models import JudgeOutput
from .outputs import rubric_part

UNIFORM = "uniform"
PASSES = "passes"
CONFIDENCE = "confidence:"
UNCERTAINTY = "uncertainty:"


def judge_raters(project: Project) -> list[Rater]:
    """The model raters (run or imported judges) with a submitted rating in the project."""
    return list(
        Rater.objects.filter(
            kind=Rater.Kind.MODEL,
            annotations__item__project=project,
            annotations__assignment__status=Assignment.Status.SUBMITTED,
        )
        .distinct()
        .order_by("name", "id")
    )


def judge_rater(project: Project, rater_id: int) -> Rater:
    for r in judge_raters(project):
        if r.id == rater_id:
            return r
    raise DomainError("no such judge in this project", code="not_found")


def _annotations(project: Project, rater: Rater):
    return Annotation.objects.filter(
        item__project=project, rater=rater, assignment__status=Assignment.Status.SUBMITTED
    ).order_by()


def metric_names(project: Project, rater: Rater) -> list[str]:
    names: dict[str, None] = {}
    for derived in _annotations(project, rater).values_list("derived", flat=True).iterator(chunk_size=5000):
        for k, v in ((derived or {}).get(METRICS_KEY) or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                names.setdefault(k, None)
    return sorted(names)


def _outputs(project: Project, rater: Rater):
    config = getattr(rater, "judge_config", None)
    if config is None:
        return JudgeOutput.objects.none()
    return JudgeOutput.objects.filter(
        run__config=config, run__project=project, order=JudgeOutput.Order.ORIGINAL, error=""
    ).order_by("item_id", "pass_index", "-run_id")


def has_passes(project: Project, rater: Rater) -> bool:
    """Whether some item has answers of at least two original-order passes or members: the
    spread needs two answers, and a configuration asking for several passes proves nothing
    about what was stored (a judge run once, or swapped orders only, has one answer per item)."""
    return (
        _outputs(project, rater)
        .order_by()  # an ordering would enter the GROUP BY
        .values("item_id")
        .annotate(n=Count("pass_index", distinct=True))
        .filter(n__gte=2)
        .exists()
    )


def sources(project: Project, rater: Rater) -> list[tuple[str, str]]:
    """``(key, label)`` of the uncertainties this judge offers: only those with data to read,
    the most informative first (the form's default is the first); ``uniform`` always."""
    out: list[tuple[str, str]] = []
    if has_passes(project, rater):
        out.append((PASSES, "disagreement across the judge's passes / members"))
    for m in metric_names(project, rater):
        out.append((CONFIDENCE + m, f"1 - confidence, from the judge's '{m}' value"))
        out.append((UNCERTAINTY + m, f"the judge's '{m}' value as the uncertainty"))
    out.append((UNIFORM, "none (uniform: every item alike)"))
    return out


def missing_sources(project: Project, rater: Rater) -> list[tuple[str, str]]:
    """``(label, reason)`` of the uncertainties this judge does not offer, so the page can say
    why they are not in the list and how to get them."""
    out: list[tuple[str, str]] = []
    if not has_passes(project, rater):
        out.append(
            (
                "disagreement across the judge's passes / members",
                "the judge stored one answer per item: run it with several passes or as an ensemble",
            )
        )
    if not metric_names(project, rater):
        out.append(
            (
                "1 - confidence, or a stored uncertainty",
                "the judge stored no confidence or other number with its ratings: import one with its outputs",
            )
        )
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    return None


def _spread(values: list[float]) -> float:
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def item_uncertainty(project: Project, rater: Rater, source: str, field: str = "") -> dict[int, float]:
    """``{item_id: u}`` for the items the judge rated (module docstring for the sources)."""
    rated = list(_annotations(project, rater).values_list("item_id", "derived"))
    if source == UNIFORM:
        return {item_id: 1.0 for item_id, _ in rated}
    if source == PASSES:
        if not field:
            raise DomainError("choose the rubric field whose answers' spread is the uncertainty")
        seen: set[tuple[int, int]] = set()
        per_item: dict[int, list[float]] = {}
        for item_id, pass_index, parsed in _outputs(project, rater).values_list("item_id", "pass_index", "parsed"):
            if (item_id, pass_index) in seen:  # the newest run's answer of this pass
                continue
            seen.add((item_id, pass_index))
            answers = rubric_part(parsed)
            v = _number(answers.get(field)) if isinstance(answers, dict) else None
            if v is not None:
                per_item.setdefault(item_id, []).append(v)
        out = {i: _spread(vs) for i, vs in per_item.items() if len(vs) >= 2}
        if not out:
            raise DomainError(f"the judge's passes give no numeric answers to {field!r} on any item")
        return out
    for prefix in (CONFIDENCE, UNCERTAINTY):
        if source.startswith(prefix):
            metric = source[len(prefix) :]
            out = {}
            for item_id, derived in rated:
                v = _number(((derived or {}).get(METRICS_KEY) or {}).get(metric))
                if v is None:
                    continue
                if prefix == CONFIDENCE:
                    out[item_id] = 1.0 - min(max(v, 0.0), 1.0)
                elif v < 0:
                    raise DomainError(f"the judge's {metric!r} is negative on an item: not an uncertainty")
                else:
                    out[item_id] = v
            if not out:
                raise DomainError(f"the judge has no {metric!r} value on any item")
            return out
    raise DomainError(f"unknown uncertainty source {source!r}")
