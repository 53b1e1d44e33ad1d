"""Stored answers -> fields: the one reading of an annotation's JSON ``answers`` and ``derived``,
shared by the agreement ratings frame (:func:`agreement.selectors.ratings_frame`), the exports
(:mod:`curation.exports`: the long annotations table and the items' ``mean_*`` columns) and the
acceptance policy (:func:`curation.policy.rating_context`).

:func:`flatten_answers` lists one annotation's fields in rubric order as ``Cell`` tuples
``(field, element, value, source)``:

- every question's answer under its id. A pairwise answer is the *item field* the rater picked
  (or ``"tie"``), resolved through the assignment's presentation order, so the screen sides
  ``"left"`` / ``"right"`` never reach a column. A checklist answer is the list of ticked option
  values (the ratings frame splits it into one flag per option itself).
- a repeated question (one answer per element of a list field of the item) as one cell per
  element: field ``q[n]``, element ``n`` (1-based). A stored value that is not a list stays one
  cell ``q`` with element None.
- then the rubric's derived fields, then ``accepted`` (the stored verdict of the rubric's
  acceptance expression), then a model rater's declared metrics (``derived["judge_metrics"]``,
  e.g. an imported CLIP score; source a :class:`Metric`), which every consumer reads like a
  numeric derived field (the ratings frame makes them interval / ordinal fields).

``element`` is None for everything that is not an element of a repeated question; ``source`` is
the :class:`~annotation.rubric.Question`, :class:`~annotation.rubric.Derived` or :class:`Metric`
the cell comes from (None for ``accepted``), so consumers never parse field names back. Missing values (None)
are left out unless ``missing=True``.

The options are what the consumers differ in:

=================  ==========================================================================
consumer           call
=================  ==========================================================================
long export        ``flatten_answers(rubric, answers, derived, presentation)`` (the defaults),
                   and ``exact=True`` for its ``value_exact`` column
items' means       ``elements=False, text=False``
ratings frame      ``exact=True, text=False, missing=True``
policy context     ``elements=False, missing=True, pair_sides=True``
=================  ==========================================================================

``exact``: a combined model judge (mean of passes, or an ensemble) must store valid rubric
options, so it answers with the options nearest its means and keeps the exact means beside them
in ``derived["judge_exact"] = {"answers": {...}, "derived": {...}}``. With ``exact=True`` the
exact means replace the stored scale / binary answers and derived fields (``accepted`` stays the
stored one). The agreement report analyses the exact means (``exact=True``, as the papers do:
"scores averaged"); the long annotations export carries both, the stored rounded answer in
``value`` / ``value_num`` (``exact=False``) and the exact reading in ``value_exact`` (a second
call with ``exact=True``, for annotations that have ``judge_exact``), so the report and a
recomputation from the export agree (``coalesce(value_exact, value_num)``). The acceptance
policy reads the rounded answers (a rule compares rubric options).

Pure: depends on :mod:`annotation.rubric` only (no database, no Django).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from .rubric import Derived, Question, Rubric, resolve_pair_choice


@dataclass(frozen=True)
class Metric:
    """A numeric score outside the rubric that a model rater declared (e.g. an imported CLIP
    similarity), stored in ``derived[METRICS_KEY]``; read like a numeric derived field."""

    id: str


#: where an annotation keeps its declared metrics: ``derived["judge_metrics"] = {name: number}``
METRICS_KEY = "judge_metrics"

Cell: TypeAlias = tuple[str, int | None, Any, Question | Derived | Metric | None]
"""``(field, element, value, source)``: one column value of one annotation (see the module doc)."""

_EMPTY: Mapping[str, Any] = {}
_NUMERIC = ("scale", "binary")


def flatten_answers(
    rubric: Rubric,
    answers: Mapping[str, Any] | None,
    derived: Mapping[str, Any] | None,
    presentation: Mapping[str, Any] | None,
    *,
    exact: bool = False,
    text: bool = True,
    elements: bool = True,
    missing: bool = False,
    pair_sides: bool = False,
) -> list[Cell]:
    """One annotation's fields as ``(field, element, value, source)`` cells, in rubric order.

    ``rubric``: the rubric to read the answers with (the annotation's own version for exports,
    the project's current one for the statistics and the policy). ``answers`` / ``derived``: the
    stored JSON (None = empty). ``presentation``: the assignment's, for pairwise sides.

    Options (defaults: what the long export writes):

    - ``exact``: an ensemble / mean-of-passes judge's exact means (``derived["judge_exact"]``)
      instead of its stored, rounded scale / binary answers and derived fields. Used by the
      agreement statistics and the export's ``value_exact`` column (see the module docstring).
    - ``text``: include ``text`` questions.
    - ``elements``: a repeated question as one ``q[n]`` cell per element; False: one cell ``q``
      holding the stored list (the expression context of the policy).
    - ``missing``: also list None values (unanswered questions and elements, missing derived
      fields; ``accepted`` when the rubric has an acceptance rule).
    - ``pair_sides``: a pairwise question as two cells, ``q`` = the stored side (``"left"``,
      ``"right"``, ``"tie"``) and ``q_field`` = the item field picked, as the rubric's
      expressions name them; otherwise one cell ``q`` = the item field picked.
    """
    answers = answers or _EMPTY
    derived = derived or _EMPTY
    exact_answers = exact_derived = _EMPTY
    if exact:
        ex = derived.get("judge_exact") or _EMPTY
        exact_answers = ex.get("answers") or _EMPTY
        exact_derived = ex.get("derived") or _EMPTY
    cells: list[Cell] = []
    append = cells.append
    for q in rubric.questions:
        qtype = q.type
        if qtype == "text" and not text:
            continue
        qid = q.id
        v = answers.get(qid)
        if exact_answers and qtype in _NUMERIC and qid in exact_answers:
            v = exact_answers[qid]
        if qtype == "pairwise":  # never repeated (the rubric parser refuses it)
            picked = resolve_pair_choice(q, v, presentation)
            if pair_sides:
                if v is not None or missing:
                    append((qid, None, v, q))
                if picked is not None or missing:
                    append((f"{qid}_field", None, picked, q))
                continue
            v = picked
        if q.repeat_over and elements and isinstance(v, list):
            for n, ev in enumerate(v, start=1):
                if ev is not None or missing:
                    append((f"{qid}[{n}]", n, ev, q))
        elif v is not None or missing:
            append((qid, None, v, q))
    for d in rubric.derived:
        v = exact_derived[d.id] if d.id in exact_derived else derived.get(d.id)
        if v is not None or missing:
            append((d.id, None, v, d))
    v = derived.get("accepted")
    if v is not None or (missing and rubric.acceptance is not None):
        append(("accepted", None, v, None))
    metrics = derived.get(METRICS_KEY)
    if metrics:
        for name, v in metrics.items():
            if v is not None or missing:
                append((name, None, v, Metric(name)))
    return cells
