"""Acceptance policies: the preset's rule applied to each rater, aggregated across raters.

Pure (no database): a policy spec plus one item's ratings in, a verdict out, so every preset's
rule can be tested on constructed cases. ``curation/services.py`` feeds it database rows.

A policy (see PROTOCOLS.md "ValueGround ... Our default"):

- ``rule``: an expression over one rater's answers and derived fields (the rubric's acceptance
  expression by default, e.g. ValueGround Eq. 7 ``q1 + q2 >= 3 and q3 == 2 and q4 == 1``);
- ``aggregation``: ``all`` raters pass, ``majority`` of raters pass (BLEnD-Vis 2-of-3),
  ``mean``: the rule applied once to the mean of the raters' numeric answers (derived fields
  recomputed from those means), or a latent-truth model, ``dawid_skene`` (Dawid and Skene 1979)
  or ``mace`` (Hovy et al. 2013): the rule applied once to the item's posterior label of each
  categorical question it reads, estimated over all items of the project with humans and model
  judges together as raters, each with its own estimated accuracy (crowd-kit's models, through
  :mod:`hvstats.latent`; derived fields and ``accepted`` recomputed from the posterior
  labels). The rule may then read only scale, binary, choice and pairwise questions (and derived
  fields computed from them); text, checklist and repeated questions are refused, as they are not
  one category per rating. The model needs the whole project, so :class:`LatentCollector` gathers
  the ratings first (``curation/services.py`` feeds it chunk by chunk) and :func:`decide` takes
  the item's posterior labels; when the model cannot be fitted (no item with two raters) every
  item stays pending with the reason;
- ``tie``: what a majority tie means, ``reject`` (default) or ``pending`` (wait for a rating);
- ``judge_screening``: model raters must pass the rule before the human review counts;
- ``min_human_ratings``: fewer complete human ratings leave the item pending;
- ``revise_if``: a rejected item goes to ``needs_revision`` when any human rating satisfies this
  expression (ValueGround: the rater wrote revision feedback);
- ``element_filter`` (optional): drop elements of a list field of the item that the human raters
  find wanting (CQ-Bench removes the values that validation finds not reflected / inconsistent):
  ``{"over": "values", "keep_if": "reflection == 1 and consistency == 1", "aggregation":
  "majority", "tie": "drop"}``. ``keep_if`` may name only questions repeated over ``over``; it is
  evaluated per element on each human rating (``reflection`` = that rater's answer for the
  element). ``aggregation``: ``majority`` (keep when more raters keep than drop), ``all`` (every
  counted rater keeps) or ``mean`` (``keep_if`` on the raters' mean answers for the element).
  ``tie`` (default ``drop``): what a majority tie means for an element - and also an element with
  no complete rating (every rater's answer for it missing). A rating whose ``keep_if`` cannot be
  evaluated on an element (an answer missing) is not counted for that element. The filter does
  not change the item's status; the decision details record ``kept`` / ``removed`` (1-based
  element numbers, as V1..V5 and the ``values[n]`` fields of the long export, with a reason) and
  exports of items carry only the kept elements plus a ``_removed`` column.

A rating whose rule evaluates to None (an answer the rule reads is missing, e.g. an annotation
under an older rubric version) is *incomplete*: it is not counted, and the reason says so.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from django.utils.translation import gettext_noop

from annotation.answers import flatten_answers
from annotation.expressions import Expression, ExpressionError
from annotation.rubric import Rubric, resolve_pair_choice
from hvstats.latent import LatentResult, latent_truth_long

AGGREGATIONS = ("all", "majority", "mean", "dawid_skene", "mace")
LATENT_AGGREGATIONS = ("dawid_skene", "mace")
#: one line each, shown beside the choice on the curation page (translated there: ``gettext``)
#: and in the API schema (in English: the schema is built once, in no request's language)
AGGREGATION_HELP = {
    "all": gettext_noop("every counted human rating passes the rule"),
    "majority": gettext_noop("more counted human ratings pass the rule than fail it (ties: see tie)"),
    "mean": gettext_noop("the rule on the mean of the human ratings' numeric answers"),
    "dawid_skene": gettext_noop(
        "the rule on each item's Dawid-Skene posterior label, learnt over humans and judges "
        "together with a confusion matrix per rater (categorical questions only)"
    ),
    "mace": gettext_noop(
        "the rule on each item's MACE posterior label, learnt over humans and judges together with "
        "a competence per rater that discounts spammers (categorical questions only)"
    ),
}
LATENT_NAMES = {"dawid_skene": "Dawid-Skene", "mace": "MACE"}
#: question types with one category per rating, which the latent-truth models can aggregate
CATEGORICAL_TYPES = ("scale", "binary", "choice", "pairwise")
TIES = ("reject", "pending")
STATUSES = ("pending", "accepted", "rejected", "needs_revision")
ELEMENT_AGGREGATIONS = ("majority", "all", "mean")
ELEMENT_TIES = ("drop", "keep")
ELEMENT_FILTER_KEYS = ("over", "keep_if", "aggregation", "tie")


class PolicyError(ValueError):
    """A policy that cannot be used; ``message`` says why in the researcher's words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class PolicySpec:
    rule: str
    aggregation: str = "all"
    tie: str = "reject"
    judge_screening: bool = False
    min_human_ratings: int = 1
    revise_if: str = ""
    element_filter: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None) -> PolicySpec:
        """Validate the shape of a raw (JSON / form) policy; names are checked by :func:`compile_policy`."""
        if not isinstance(raw, Mapping):
            raise PolicyError("a policy must be an object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(raw) - known)
        if unknown:
            raise PolicyError(f"unknown policy key(s): {', '.join(unknown)} (allowed: {', '.join(sorted(known))})")
        merged = {**(defaults or {}), **{k: v for k, v in raw.items() if v is not None}}
        rule = merged.get("rule")
        if not isinstance(rule, str) or not rule.strip():
            raise PolicyError("the policy needs a rule (this rubric has no acceptance expression to default to)")
        aggregation = merged.get("aggregation", "all")
        if aggregation not in AGGREGATIONS:
            raise PolicyError(f"unknown aggregation {aggregation!r}: use one of {', '.join(AGGREGATIONS)}")
        tie = merged.get("tie", "reject")
        if tie not in TIES:
            raise PolicyError(f"unknown tie handling {tie!r}: use one of {', '.join(TIES)}")
        try:
            min_h = int(merged.get("min_human_ratings", 1))
        except (TypeError, ValueError):
            raise PolicyError("min_human_ratings must be a whole number") from None
        if not 0 <= min_h <= 100:
            raise PolicyError("min_human_ratings must be between 0 and 100")
        screening = merged.get("judge_screening", False)
        if isinstance(screening, str):
            screening = screening.strip().lower() in ("1", "true", "yes", "on")
        revise_if = merged.get("revise_if") or ""
        if not isinstance(revise_if, str):
            raise PolicyError("revise_if must be an expression (text)")
        return cls(
            rule=rule.strip()[:1000],
            aggregation=aggregation,
            tie=tie,
            judge_screening=bool(screening),
            min_human_ratings=min_h,
            revise_if=revise_if.strip()[:1000],
            element_filter=parse_element_filter(merged.get("element_filter")),
        )


def parse_element_filter(raw: Any) -> dict[str, Any]:
    """The shape of an ``element_filter`` (an object, or its JSON text from a form; empty = none)."""
    if raw is None or raw == {} or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise PolicyError(f"element_filter is not valid JSON ({exc.msg} at column {exc.colno})") from None
        if raw is None or raw == {}:
            return {}
    if not isinstance(raw, Mapping):
        raise PolicyError('element_filter must be an object such as {"over": "values", "keep_if": "reflection == 1"}')
    unknown = sorted(set(raw) - set(ELEMENT_FILTER_KEYS))
    if unknown:
        raise PolicyError(
            f"unknown element_filter key(s): {', '.join(map(str, unknown))} (allowed: {', '.join(ELEMENT_FILTER_KEYS)})"
        )
    over, keep_if = raw.get("over"), raw.get("keep_if")
    if not isinstance(over, str) or not over.strip():
        raise PolicyError("element_filter needs 'over': the list field whose elements are filtered")
    if not isinstance(keep_if, str) or not keep_if.strip():
        raise PolicyError(
            f"element_filter needs 'keep_if': an expression over the questions repeated over {over.strip()!r}"
        )
    aggregation = raw.get("aggregation") or "majority"
    if aggregation not in ELEMENT_AGGREGATIONS:
        raise PolicyError(
            f"unknown element_filter aggregation {aggregation!r}: use one of {', '.join(ELEMENT_AGGREGATIONS)}"
        )
    tie = raw.get("tie") or "drop"
    if tie not in ELEMENT_TIES:
        raise PolicyError(f"unknown element_filter tie {tie!r}: use one of {', '.join(ELEMENT_TIES)}")
    return {"over": over.strip(), "keep_if": keep_if.strip()[:1000], "aggregation": aggregation, "tie": tie}


def rubric_names(rubric: Rubric) -> list[str]:
    names = [q.id for q in rubric.questions]
    names += [f"{q.id}_field" for q in rubric.questions if q.type == "pairwise"]
    names += [d.id for d in rubric.derived]
    if rubric.acceptance is not None:
        names.append("accepted")
    return names


@dataclass(frozen=True)
class CompiledPolicy:
    spec: PolicySpec
    rubric: Rubric
    rule: Expression
    revise: Expression | None
    keep: Expression | None = None
    element_questions: tuple[str, ...] = ()
    latent_fields: tuple[str, ...] = ()  # categorical fields whose posterior labels the rule reads


def categorical_fields(rubric: Rubric) -> list[str]:
    """The fields with one category per rating: non-repeated scale, binary, choice and pairwise
    questions, and ``<q>_field`` (the item field picked) of each pairwise question."""
    names: list[str] = []
    for q in rubric.questions:
        if q.type in CATEGORICAL_TYPES and not q.repeat_over:
            names.append(q.id)
            if q.type == "pairwise":
                names.append(f"{q.id}_field")
    return names


def latent_fields(rubric: Rubric, expr: Expression, aggregation: str) -> tuple[str, ...]:
    """The categorical fields an expression reads, directly or through derived fields and
    ``accepted``; a name that is not categorical is refused with the reason."""
    categorical = set(categorical_fields(rubric))
    derived = {d.id: d.expr for d in rubric.derived}
    if rubric.acceptance is not None:
        derived["accepted"] = rubric.acceptance
    questions = {q.id: q for q in rubric.questions}
    found: list[str] = []
    refused: list[str] = []

    def walk(names: set[str], via: str | None, seen: frozenset[str]) -> None:
        for name in sorted(names):
            if name in categorical:
                if name not in found:
                    found.append(name)
            elif name in derived and name not in seen:
                walk(derived[name].names, name, seen | {name})
            elif name not in derived:
                q = questions.get(name)
                what = (
                    f"a repeated {q.type} question"
                    if q and q.repeat_over
                    else (f"a {q.type} question" if q else "not a category")
                )
                refused.append(f"{name} ({what}{f', read by {via}' if via else ''})")

    walk(set(expr.names), None, frozenset())
    if refused:
        raise PolicyError(
            f"aggregation {aggregation!r} needs categorical fields (scale, binary, choice or pairwise "
            f"questions, or derived fields computed from them); the rule reads {', '.join(refused)}: "
            "use all, majority or mean for this rule"
        )
    return tuple(found)


def compile_policy(spec: PolicySpec, rubric: Rubric) -> CompiledPolicy:
    names = rubric_names(rubric)

    def comp(source: str, what: str) -> Expression:
        try:
            expr = Expression(source)
        except ExpressionError as exc:
            raise PolicyError(f"{what}: {exc}") from None
        unknown = sorted(expr.names - set(names))
        if unknown:
            raise PolicyError(
                f"{what} refers to unknown field(s) {', '.join(unknown)}; fields of this rubric: {', '.join(names)}"
            )
        return expr

    keep, element_questions = None, ()
    ef = spec.element_filter
    if ef:
        repeated = [q for q in rubric.questions if q.repeat_over == ef["over"]]
        if not repeated:
            lists = sorted({q.repeat_over for q in rubric.questions if q.repeat_over})
            raise PolicyError(
                f"element_filter: no question of this rubric is repeated over {ef['over']!r}; "
                f"list fields with repeated questions: {', '.join(lists) or '(none)'}"
            )
        usable = [q.id for q in repeated if q.type in ("scale", "binary", "choice")]
        try:
            keep = Expression(ef["keep_if"])
        except ExpressionError as exc:
            raise PolicyError(f"element_filter keep_if: {exc}") from None
        unknown = sorted(keep.names - set(usable))
        if unknown:
            raise PolicyError(
                f"element_filter keep_if refers to unknown field(s) {', '.join(unknown)}; questions "
                f"repeated over {ef['over']!r}: {', '.join(usable) or '(none usable)'}"
            )
        if ef["aggregation"] == "mean":
            labels = sorted(n for n in keep.names if rubric.question(n).type == "choice")
            if labels:
                raise PolicyError(
                    f"element_filter aggregation 'mean' needs numeric questions; {', '.join(labels)} "
                    "is a choice: use majority or all"
                )
        element_questions = tuple(q for q in usable if q in keep.names)
    rule = comp(spec.rule, "the rule")
    latent = latent_fields(rubric, rule, spec.aggregation) if spec.aggregation in LATENT_AGGREGATIONS else ()
    return CompiledPolicy(
        spec=spec,
        rubric=rubric,
        rule=rule,
        revise=comp(spec.revise_if, "revise_if") if spec.revise_if else None,
        keep=keep,
        element_questions=element_questions,
        latent_fields=latent,
    )


@dataclass
class Rating:
    """One submitted annotation as the policy sees it."""

    rater: str
    kind: str  # "human" | "model"
    answers: Mapping[str, Any]
    derived: Mapping[str, Any] = field(default_factory=dict)
    presentation: Mapping[str, Any] | None = None
    # what a judge does not decide (judges/decides.py): names whose value is not its decision
    # (questions it does not answer, derived fields reading a flag it does not assess), and of
    # a partly decided checklist the flags it does decide. A rule reading what it does not
    # decide is incomplete for the judge (:func:`judge_truth`), never passed or failed on a "no".
    undecided: frozenset[str] = frozenset()
    partial: Mapping[str, frozenset[str]] = field(default_factory=dict)


@dataclass
class Verdict:
    status: str
    reason: str
    details: dict[str, Any]


def rating_context(policy: CompiledPolicy, rating: Rating) -> dict[str, Any]:
    """The names the policy's expressions read, for one rating (see :func:`rubric_context`)."""
    return rubric_context(policy.rubric, rating)


def rubric_context(rubric: Rubric, rating: Rating) -> dict[str, Any]:
    """The names a rubric's expressions read, for one rating: every answer as stored (a
    repeated question's list whole), ``<q>_field`` of a pairwise question, the derived fields
    and ``accepted`` (computed when the stored annotation lacks them, e.g. under an older rubric
    version); flattened by :func:`annotation.answers.flatten_answers` like every other reader."""
    derived = dict(rating.derived or {})
    if any(d.id not in derived for d in rubric.derived) or (
        rubric.acceptance is not None and "accepted" not in derived
    ):
        derived = {**rubric.derive(dict(rating.answers), presentation=rating.presentation), **derived}
    cells = flatten_answers(
        rubric, rating.answers, derived, rating.presentation, elements=False, missing=True, pair_sides=True
    )
    undecided = rating.undecided
    return {name: None if name in undecided else value for name, _, value, _ in cells}


def judge_truth(policy: CompiledPolicy, rating: Rating) -> bool | None:
    """The rule on one judge's own rating; None (incomplete) when it is missing an answer the
    rule reads or when the rule reads something the judge does not decide (an expression with a
    missing name is not always None: ``any_failure == 0`` would be False)."""
    if (rating.undecided or rating.partial) and policy.rule.reads_undecided(rating.undecided, rating.partial):
        return None
    return _truth(policy.rule, rating_context(policy, rating))


# ------------------------------------------------------------------------------ latent truth
@dataclass
class LatentLabels:
    """A latent-truth model fitted per categorical field over a project's items: ``results`` per
    field, or ``errors[field]``: why the model could not be fitted on it (no posterior then)."""

    method: str
    results: dict[str, LatentResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    positions: dict[Any, int] = field(default_factory=dict, repr=False)  # item id -> row

    def item(self, item_id: Any) -> dict[str, tuple[Any, float]]:
        """{field: (posterior label, entropy in nats)} of one item (fields it has a label for)."""
        out = {}
        for name, res in self.results.items():
            i = self.positions.get(item_id)
            if i is not None and res.labels[i] is not None:
                out[name] = (_plain(res.labels[i]), float(res.entropy[i]))
        return out

    def rater_accuracy(self) -> dict[str, dict[str, float]]:
        """{field: {rater: estimated accuracy}} (see :mod:`hvstats.latent`)."""
        return {name: {r: round(a, 4) for r, a in res.accuracy.items()} for name, res in self.results.items()}


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value (answers are JSON: int, float, str, bool)."""
    return v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v


class LatentCollector:
    """Gathers the categorical answers of every rater (humans and model judges alike) over a
    project's items, a chunk of items at a time, then fits :func:`latent_truth_long` per field.
    One label per (item, rater, field): a later rating of the same rater replaces an earlier one."""

    def __init__(self, rubric: Rubric, fields: Sequence[str], method: str) -> None:
        if method not in LATENT_AGGREGATIONS:
            raise ValueError(f"unknown latent-truth method {method!r}")
        self.rubric, self.fields, self.method = rubric, tuple(fields), method
        self.items: list[Any] = []
        self._cells: dict[str, dict[tuple[Any, str], Any]] = {f: {} for f in self.fields}
        self._pairs = {f"{q.id}_field": q for q in rubric.questions if q.type == "pairwise"}
        categorical = set(categorical_fields(rubric))
        outside = [f for f in self.fields if f not in categorical]
        if outside:
            raise ValueError(f"not categorical fields: {', '.join(outside)}")

    def add(self, item_id: Any, ratings: Sequence[Rating]) -> None:
        """One item's ratings. The value of a field is what :func:`rubric_context` gives it (the
        stored answer; for ``<q>_field`` the item field the stored side picks), read directly."""
        self.items.append(item_id)
        for r in ratings:
            answers = r.answers or {}
            for name in self.fields:
                pair = self._pairs.get(name)
                v = (
                    answers.get(name)
                    if pair is None
                    else resolve_pair_choice(pair, answers.get(pair.id), r.presentation)
                )
                if v is not None and not isinstance(v, (list, dict)):
                    self._cells[name][(item_id, r.rater)] = v

    def fit(self) -> LatentLabels:
        out = LatentLabels(self.method, positions={item: i for i, item in enumerate(self.items)})
        rubric_options = {
            q.id: q.option_values() for q in self.rubric.questions if q.type in ("scale", "binary", "choice")
        }
        for name, cells in self.fields_cells():
            keys = list(cells)
            options = rubric_options.get(name)
            values = list(cells.values())
            categories = options if options and all(v in options for v in values) else None
            try:
                out.results[name] = latent_truth_long(
                    [k[0] for k in keys],
                    [k[1] for k in keys],
                    values,
                    item_ids=self.items,
                    method=self.method,  # type: ignore[arg-type]
                    categories=categories,
                )
            except ValueError as exc:
                out.errors[name] = str(exc)
        return out

    def fields_cells(self) -> list[tuple[str, dict[tuple[Any, str], Any]]]:
        return list(self._cells.items())


def _truth(expr: Expression, ctx: Mapping[str, Any]) -> bool | None:
    value = expr.evaluate(ctx)
    return None if value is None else bool(value)


def _mean_answers(policy: CompiledPolicy, contexts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean of numeric answers across raters (element-wise for repeated questions); the modal
    label for choice / pairwise answers (None on a tie); checklist flags ticked by a majority."""
    out: dict[str, Any] = {}
    for q in policy.rubric.questions:
        values = [c.get(q.id) for c in contexts]
        if q.type in ("scale", "binary"):
            if q.repeat_over:
                lists = [v for v in values if isinstance(v, list)]
                width = max((len(v) for v in lists), default=0)
                out[q.id] = [_mean([v[i] for v in lists if i < len(v)]) for i in range(width)]
            else:
                out[q.id] = _mean(values)
        elif q.type == "checklist":
            ticked = Counter(f for v in values if isinstance(v, list) for f in v)
            out[q.id] = [f for f in q.option_values() if ticked[f] * 2 > len(contexts)]
        elif q.type in ("choice", "pairwise") and not q.repeat_over:
            out[q.id] = _mode(values)
            if q.type == "pairwise":
                out[f"{q.id}_field"] = _mode([c.get(f"{q.id}_field") for c in contexts])
        else:
            out[q.id] = None
    ctx = dict(out)
    for d in policy.rubric.derived:
        v = d.expr.evaluate(ctx)
        ctx[d.id] = int(v) if isinstance(v, bool) else v
    if policy.rubric.acceptance is not None:
        v = policy.rubric.acceptance.evaluate(ctx)
        ctx["accepted"] = None if v is None else bool(v)
    return ctx


def _mean(values: Sequence[Any]) -> float | None:
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return sum(nums) / len(nums) if nums else None


def _mode(values: Sequence[Any]) -> Any:
    c = Counter(v for v in values if v is not None).most_common(2)
    if not c or (len(c) > 1 and c[0][1] == c[1][1]):
        return None
    return c[0][0]


def filter_elements(policy: CompiledPolicy, ratings: Sequence[Rating]) -> dict[str, Any] | None:
    """The policy's element filter on one item's human ratings: ``{"over", "n", "kept": [numbers],
    "removed": [{"element": number, "reason"}]}`` with 1-based element numbers (None: no filter).

    The number of elements is the longest answer list of the questions ``keep_if`` reads (the
    rubric validator makes every answer list as long as the item's list)."""
    ef = policy.spec.element_filter
    if not ef or policy.keep is None:
        return None
    names = policy.element_questions
    lists = [{n: (r.answers or {}).get(n) for n in names} for r in ratings if r.kind == "human"]
    width = max((len(v) for a in lists for v in a.values() if isinstance(v, list)), default=0)
    keep_tie = ef["tie"] == "keep"
    kept: list[int] = []
    removed: list[dict[str, Any]] = []
    for i in range(width):
        ctxs = [{n: (v[i] if isinstance(v, list) and i < len(v) else None) for n, v in a.items()} for a in lists]
        # a rating counts for an element only when every answer keep_if reads is there
        complete = [c for c in ctxs if all(x is not None for x in c.values())]
        if ef["aggregation"] == "mean":
            mean_ctx = {n: _mean([c[n] for c in complete]) for n in names}
            v = _truth(policy.keep, mean_ctx) if complete else None
            shown = ", ".join(f"{n}={_fmt(x)}" for n, x in mean_ctx.items() if x is not None)
            if v is None:
                keep, why = keep_tie, f"no complete rating ({'kept' if keep_tie else 'dropped'} as a tie)"
            else:
                keep, why = v, f"mean of the ratings ({shown}) {'passes' if v else 'fails'} keep_if"
        else:
            votes = [x for x in (_truth(policy.keep, c) for c in complete) if x is not None]
            n_keep, n_drop = sum(votes), len(votes) - sum(votes)
            counted = f"{n_keep} of {len(votes)} rating(s) keep"
            if not votes:
                keep, why = keep_tie, f"no complete rating ({'kept' if keep_tie else 'dropped'} as a tie)"
            elif ef["aggregation"] == "all":
                keep, why = n_drop == 0, f"{counted} (all must)"
            elif n_keep != n_drop:
                keep, why = n_keep > n_drop, f"majority: {counted}"
            else:
                keep, why = keep_tie, f"tie: {counted} ({'kept' if keep_tie else 'dropped'})"
        if len(complete) < len(ctxs):
            why += f"; {len(ctxs) - len(complete)} incomplete rating(s) not counted"
        if keep:
            kept.append(i + 1)
        else:
            removed.append({"element": i + 1, "reason": f"{ef['keep_if']}: {why}"})
    return {
        "over": ef["over"],
        "keep_if": ef["keep_if"],
        "aggregation": ef["aggregation"],
        "tie": ef["tie"],
        "n": width,
        "kept": kept,
        "removed": removed,
    }


def decide(
    policy: CompiledPolicy, ratings: Sequence[Rating], latent: LatentLabels | None = None, item_id: Any = None
) -> Verdict:
    """The status of one item under the policy, with a reason a researcher can read. Under a
    latent-truth aggregation, ``latent`` is the model fitted over the project and ``item_id``
    the item's id in it (``latent`` None: the item stays pending)."""
    verdict = _decide(policy, ratings, latent, item_id)
    elements = filter_elements(policy, ratings)
    if elements is not None:
        verdict.details["element_filter"] = elements
        if elements["removed"]:
            verdict.reason += f"; {len(elements['removed'])} of {elements['n']} {elements['over']} removed"
    return verdict


def _decide(
    policy: CompiledPolicy, ratings: Sequence[Rating], latent: LatentLabels | None = None, item_id: Any = None
) -> Verdict:
    spec = policy.spec
    humans = [r for r in ratings if r.kind == "human"]
    models = [r for r in ratings if r.kind == "model"]
    details: dict[str, Any] = {"aggregation": spec.aggregation, "n_human": len(humans), "n_model": len(models)}

    if spec.judge_screening:
        if not models:
            return Verdict("pending", "waiting for judge screening (no judge rating yet)", details)
        judged = [(m.rater, judge_truth(policy, m)) for m in models]
        details["judges"] = dict(judged)
        if any(v is None for _, v in judged):
            return Verdict("pending", "waiting for judge screening (a judge rating is incomplete)", details)
        failed = [name for name, v in judged if v is False]
        if failed:
            return Verdict("rejected", f"rejected by judge screening ({', '.join(failed)})", details)

    contexts = [rating_context(policy, h) for h in humans]
    verdicts = [_truth(policy.rule, c) for c in contexts]
    complete = [(c, v) for c, v in zip(contexts, verdicts, strict=True) if v is not None]
    n, n_pass = len(complete), sum(1 for _, v in complete if v)
    details.update(n_complete=n, n_pass=n_pass, n_incomplete=len(humans) - n)
    incomplete = f"; {len(humans) - n} incomplete rating(s) not counted" if len(humans) > n else ""
    minimum = max(spec.min_human_ratings, 1)
    if n < minimum:
        return Verdict("pending", f"{n} of {minimum} required human rating(s){incomplete}", details)

    if spec.aggregation == "all":
        status = "accepted" if n_pass == n else "rejected"
        reason = f"{n_pass} of {n} human rating(s) pass the rule (all must){incomplete}"
    elif spec.aggregation == "majority":
        n_fail = n - n_pass
        if n_pass > n_fail:
            status, reason = "accepted", f"majority: {n_pass} of {n} pass{incomplete}"
        elif n_pass < n_fail:
            status, reason = "rejected", f"majority: {n_pass} of {n} pass{incomplete}"
        else:
            status = "rejected" if spec.tie == "reject" else "pending"
            outcome = "rejected" if status == "rejected" else "waiting for another rating"
            reason = f"tie: {n_pass} pass, {n_fail} fail ({outcome}){incomplete}"
            details["tie"] = True
    elif spec.aggregation in LATENT_AGGREGATIONS:
        status, reason = _decide_latent(policy, ratings, latent, details, item_id=item_id)
        reason += incomplete
    else:  # mean
        mean_ctx = _mean_answers(policy, [c for c, _ in complete])
        details["mean"] = {
            q.id: mean_ctx.get(q.id)
            for q in policy.rubric.questions
            if q.type in ("scale", "binary") and not q.repeat_over
        }
        v = _truth(policy.rule, mean_ctx)
        if v is None:
            status, reason = "pending", "the rule cannot be evaluated on the mean scores (a mean is missing)"
        else:
            status = "accepted" if v else "rejected"
            shown = ", ".join(f"{k}={_fmt(x)}" for k, x in details["mean"].items() if x is not None)
            reason = f"mean of {n} human rating(s) {'passes' if v else 'fails'} the rule ({shown}){incomplete}"

    if status == "rejected" and policy.revise is not None:
        asked = sum(1 for c, _ in complete if policy.revise.evaluate(c))
        if asked:
            details["revision_requested_by"] = asked
            return Verdict("needs_revision", f"{reason}; revision requested by {asked} rater(s)", details)
    return Verdict(status, reason, details)


def acceptance_labels(policy: CompiledPolicy, ratings: Sequence[Rating]) -> tuple[int | None, dict[str, int | None]]:
    """What the people decide and what each judge would decide alone, for the PPI of the
    acceptance rate: the policy on the human ratings only (judge screening left out; 1 accepted,
    0 rejected or sent to revision, None still pending) and the rule on each judge's own rating
    (1 / 0 / None when incomplete)."""
    humans_only = replace(policy, spec=replace(policy.spec, judge_screening=False))
    human = _decide(humans_only, [r for r in ratings if r.kind == "human"]).status
    label = None if human == "pending" else int(human == "accepted")
    judges: dict[str, int | None] = {}
    for m in ratings:
        if m.kind == "model":
            v = judge_truth(policy, m)
            judges[m.rater] = None if v is None else int(v)
    return label, judges


def _decide_latent(
    policy: CompiledPolicy,
    ratings: Sequence[Rating],
    latent: LatentLabels | None,
    details: dict[str, Any],
    *,
    item_id: Any,
) -> tuple[str, str]:
    """(status, reason) from the item's posterior labels: the rule evaluated once on them, with
    derived fields and ``accepted`` recomputed from those labels."""
    name = LATENT_NAMES[policy.spec.aggregation]
    if latent is None or item_id is None:
        return "pending", f"{name} has not been fitted for this item"
    missing_fit = [f for f in policy.latent_fields if f not in latent.results]
    if missing_fit:
        by_why: dict[str, list[str]] = {}
        for f in missing_fit:
            by_why.setdefault(latent.errors.get(f, "no ratings"), []).append(f)
        why = "; ".join(f"{', '.join(fs)}: {w}" for w, fs in by_why.items())
        return "pending", f"{name} cannot be fitted ({why})"
    posterior = latent.item(item_id)
    ctx: dict[str, Any] = dict.fromkeys(rubric_names(policy.rubric))
    ctx.update({f: posterior[f][0] for f in policy.latent_fields if f in posterior})
    details["latent"] = {
        f: {"label": posterior[f][0], "entropy": round(posterior[f][1], 6)}
        for f in policy.latent_fields
        if f in posterior
    }
    details["n_raters"] = len({r.rater for r in ratings})
    unlabelled = [f for f in policy.latent_fields if f not in posterior]
    if unlabelled:
        return "pending", f"no rating of {', '.join(unlabelled)} for the {name} posterior"
    for d in policy.rubric.derived:  # the derived fields the rule reads come from posterior labels
        v = d.expr.evaluate(ctx)
        ctx[d.id] = int(v) if isinstance(v, bool) else v
    if policy.rubric.acceptance is not None:
        v = policy.rubric.acceptance.evaluate(ctx)
        ctx["accepted"] = None if v is None else bool(v)
    v = _truth(policy.rule, ctx)
    shown = ", ".join(f"{f}={_fmt(posterior[f][0])}" for f in policy.latent_fields)
    if v is None:
        return "pending", f"the rule cannot be evaluated on the {name} posterior labels ({shown})"
    return (
        "accepted" if v else "rejected",
        f"{name} posterior labels ({shown}) over {details['n_raters']} rater(s) {'pass' if v else 'fail'} the rule",
    )


def _fmt(x: Any) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if isinstance(x, float) else str(x)
