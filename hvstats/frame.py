"""The library's DataFrame API: ratings in long form in, plain dicts and DataFrames out.

Ratings: one row per rating, columns ``item``, ``rater``, ``value`` (required), ``field``
(default ``"value"``), ``rater_kind`` (``"human"`` or ``"model"``; or name the judges with
``judges=``), any stratum column (``country``, ``model``, ...), ``pi`` for active estimates.
A wide table (one column per field) is turned long by :func:`long_form`.

- :func:`agreement`: the whole report as a plain dict (what ``hv-stats FILE --format json``
  prints): agreement coefficients with bootstrap intervals, human ceilings, each judge vs the
  humans, the alt-test verdict and the PPI++ mean per judge, field and stratum;
- :func:`coefficients`, :func:`alt_tests`, :func:`ppi`: that dict as DataFrames, one row per
  (field, block, comparison, metric), per (field, block, judge); :func:`answers`: one row per
  judge, its one answer over the fields;
- :func:`active`: active estimates (Zrnic and Candès, ICML 2024) as a DataFrame;
- :func:`latent_truth`: Dawid-Skene or MACE labels per item and accuracy per rater (needs the
  ``latent`` extra, crowd-kit);
- :func:`validation_input` and :func:`paper_tables`: a protocol's paper tables, given the
  protocol's table function (in the HV platform: ``benchmarks/<paper>/tables.py``), as DataFrames.

Everything is computed by the functions the platform calls (:mod:`.report`,
:mod:`.active_table`, :mod:`.latent`, :mod:`.validation`); this module only reshapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .active_table import active_table
from .data import RatingTableError, to_frame
from .io import wide_to_long
from .options import DEFAULT_EPSILON, VERDICTS
from .report import agreement_report
from .tables import Table, format_cell
from .validation import MIN_RATER_ITEMS, RaterInfo, ValidationInput

if TYPE_CHECKING:
    from .latent import Method

BLOCK_ALL = "all"


def long_form(wide: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """A wide table (``item``, ``rater``, one column per field; ``rater_kind``, ``pi`` and the
    ``by`` columns kept as they are) in long form, one row per non-empty cell."""
    return wide_to_long(wide, by)


def agreement(
    ratings: Any,
    *,
    fields: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    level: str | None = None,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    epsilon: float = DEFAULT_EPSILON,
    half_width: float | None = None,
    joint_alt_test: bool = False,
) -> dict[str, Any]:
    """The agreement report with both verdicts (alt-test, PPI++; ``half_width`` adds PPI's
    budget advice): :func:`.report.agreement_report`, as the command line asks for it."""
    verdicts = [v for v in VERDICTS if not metrics or v in metrics]
    return agreement_report(
        ratings,
        fields=fields,
        metrics=metrics,
        level=level,
        by=by,
        judges=judges,
        bootstrap=bootstrap,
        seed=seed,
        verdicts=verdicts,
        epsilon=epsilon,
        half_width=half_width,
        joint_alt_test=joint_alt_test,
    )


def _blocks(report: Mapping[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(field, block, block's results): ``all`` first, then ``column=value`` per stratum."""
    for f, fo in report["fields"].items():
        yield f, BLOCK_ALL, fo
        for c, groups in fo.get("strata", {}).items():
            for g, go in groups.items():
                yield f, f"{c}={g}", go


def _ci(ci: Any) -> tuple[float | None, float | None]:
    return (ci[0], ci[1]) if ci else (None, None)


def coefficients(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per coefficient: ``field, block, comparison, metric, value, ci_low, ci_high,
    p_value, n_items, reason``. ``comparison``: ``humans`` (all humans together),
    ``humans leave-one-out`` and ``humans split-half`` (the ceilings), ``<judge> vs human
    mean`` and ``<judge> vs human majority``. A block without enough items has one row with
    its reason."""
    rows: list[dict[str, Any]] = []

    def add(f: str, block: str, comparison: str, metric: str, d: Mapping[str, Any]) -> None:
        lo, hi = _ci(d.get("ci"))
        rows.append(
            {
                "field": f,
                "block": block,
                "comparison": comparison,
                "metric": metric,
                "value": d.get("value"),
                "ci_low": lo,
                "ci_high": hi,
                "p_value": d.get("p_value"),
                "n_items": d.get("n_items"),
                "reason": d.get("reason"),
            }
        )

    for f, block, b in _blocks(report):
        if "humans_vs_humans" not in b:
            add(f, block, "", "", {"reason": b.get("reason")})
            continue
        h = b["humans_vs_humans"]
        for k, v in h.items():
            if isinstance(v, dict) and "metric" in v:
                add(f, block, "humans", k, v)
        for group, words in (("leave_one_rater_out", "leave-one-out"), ("split_half", "split-half")):
            for k, v in h.get(group, {}).items():
                add(f, block, f"humans {words}", k, v)
        for j, jd in b["judges_vs_humans"].items():
            for group, words in (("vs_human_mean", "vs human mean"), ("vs_human_majority", "vs human majority")):
                for k, v in jd.get(group, {}).items():
                    add(f, block, f"{j} {words}", k, v)
    return pd.DataFrame(rows, columns=_COEFFICIENT_COLUMNS)


_COEFFICIENT_COLUMNS = [
    "field",
    "block",
    "comparison",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "p_value",
    "n_items",
    "reason",
]


def alt_tests(report: Mapping[str, Any]) -> pd.DataFrame:
    """The alt-test per (field, block, judge): ``winning_rate`` (ω), ``advantage_probability``
    (ρ), ``passed`` (ω >= 0.5), ``epsilon``, ``scoring``, ``n_items``, ``n_humans``,
    ``reason`` (why undefined), ``warnings`` (what makes a verdict uninformative: no variation,
    one category, too few humans, no common item; ``; ``-joined). The per-human tests stay in the
    report dict."""
    rows = []
    for f, block, b in _blocks(report):
        for j, jd in b.get("judges_vs_humans", {}).items():
            a = jd.get("alt_test")
            if a is None:
                continue
            rows.append(
                {
                    "field": f,
                    "block": block,
                    "judge": j,
                    "winning_rate": a.get("winning_rate"),
                    "advantage_probability": a.get("advantage_probability"),
                    "passed": a.get("passed"),
                    "epsilon": a.get("epsilon"),
                    "scoring": a.get("scoring"),
                    "n_items": a.get("n_items"),
                    "n_humans": a.get("n_humans"),
                    "reason": a.get("reason"),
                    "warnings": "; ".join(a.get("warnings") or ()),
                }
            )
    cols = ["field", "block", "judge", "winning_rate", "advantage_probability", "passed", "epsilon", "scoring"]
    return pd.DataFrame(rows, columns=[*cols, "n_items", "n_humans", "reason", "warnings"])


def answers(report: Mapping[str, Any]) -> pd.DataFrame:
    """One answer per judge (the report's ``"answers"``, :mod:`.answers`): ``verdict``
    (replace / some_fields / cannot / cannot_tell), the fields passed, failed and undecided
    (comma-joined), ``stability`` (leave-one-human-out), ``borderline``, ``n_humans``,
    ``n_items``, ``epsilon``, ``reason`` and the headline of human labels saved with PPI++
    (``labels_saved``: the fewest over the judge's fields, ``labels_saved_field`` the field that
    sets it; :func:`.ppi.judge_labels_saved`)."""
    cols = [
        "judge",
        "verdict",
        "fields_passed",
        "fields_failed",
        "fields_undecided",
        "stability",
        "borderline",
        "n_humans",
        "n_items",
        "epsilon",
        "reason",
        "labels_saved",
        "labels_saved_field",
    ]
    rows = [
        {
            **{k: a.get(k) for k in cols},
            **{k: ", ".join(a.get(k) or ()) for k in ("fields_passed", "fields_failed", "fields_undecided")},
            "labels_saved": (a.get("labels_saved") or {}).get("items"),
            "labels_saved_field": (a.get("labels_saved") or {}).get("field"),
        }
        for a in report.get("answers") or ()
    ]
    return pd.DataFrame(rows, columns=cols)


def notes(report: Mapping[str, Any]) -> pd.DataFrame:
    """The report's notes (``"notes"``, :mod:`.notes`): one row per note, with its ``code``
    (no_variation, one_category, too_few_humans, no_common_item, small_sample, exact_interval,
    zero_width_interval),
    where it applies (``field``, ``stratum``, ``judge``, ``statistic``), the numbers it rests on
    and its ``text``."""
    cols = ["code", "field", "stratum", "judge", "statistic", "value", "n_items", "n_humans", "threshold", "text"]
    return pd.DataFrame([{k: n.get(k) for k in cols} for n in report.get("notes") or ()], columns=cols)


def ppi(report: Mapping[str, Any]) -> pd.DataFrame:
    """PPI++ per (field, block, judge): the estimate of the field's mean and its 95% CI, the
    human-only estimate and CI, ``lambda``, ``n_labeled`` / ``n_unlabeled``, and, when the
    report was asked with ``half_width``, the budget advice: human ratings (and items) needed
    for a CI of that half-width with PPI++ and with humans alone (``budget_reason`` when PPI++
    cannot reach it), and ``labels_saved`` (human-rated items saved at the PPI++ interval's own
    half-width, :func:`.ppi.labels_saved`)."""
    rows = []
    for f, block, b in _blocks(report):
        for j, jd in b.get("judges_vs_humans", {}).items():
            p = jd.get("ppi")
            if p is None:
                continue
            lo, hi = _ci(p.get("ci"))
            clo, chi = _ci(p.get("classical_ci"))
            budget = p.get("budget") or {}
            rows.append(
                {
                    "field": f,
                    "block": block,
                    "judge": j,
                    "estimate": p.get("estimate"),
                    "ci_low": lo,
                    "ci_high": hi,
                    "human_only": p.get("classical_estimate"),
                    "human_only_ci_low": clo,
                    "human_only_ci_high": chi,
                    "lambda": p.get("lambda"),
                    "n_labeled": p.get("n_labeled"),
                    "n_unlabeled": p.get("n_unlabeled"),
                    "half_width": budget.get("half_width"),
                    "ppi_human_ratings": budget.get("ppi_human_ratings"),
                    "human_only_ratings": budget.get("classical_human_ratings"),
                    "ppi_items": budget.get("ppi_items"),
                    "human_only_items": budget.get("classical_items"),
                    "budget_reason": budget.get("reason"),
                    "labels_saved": (p.get("labels_saved") or {}).get("items"),
                    "reason": p.get("reason"),
                }
            )
    return pd.DataFrame(rows, columns=_PPI_COLUMNS)


_PPI_COLUMNS = [
    "field",
    "block",
    "judge",
    "estimate",
    "ci_low",
    "ci_high",
    "human_only",
    "human_only_ci_low",
    "human_only_ci_high",
    "lambda",
    "n_labeled",
    "n_unlabeled",
    "half_width",
    "ppi_human_ratings",
    "human_only_ratings",
    "ppi_items",
    "human_only_items",
    "budget_reason",
    "labels_saved",
    "reason",
]


def active(
    ratings: Any,
    *,
    fields: Sequence[str] | None = None,
    level: str | None = None,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Active estimates of each field's mean per judge (and stratum of ``by``), from ratings
    with a ``pi`` column (each item's sampling probability; unlabelled items listed with the
    judge's rating only): ``field, block, judge, estimate, ci_low, ci_high, lambda, n_labeled,
    n_items, reason``. The dict, with the uniform-sampling comparison, is
    :func:`.active_table.active_table`."""
    res = active_table(ratings, fields=fields, level=level, by=by, judges=judges)
    rows = []

    def add(f: str, block: str, j: str, a: Mapping[str, Any]) -> None:
        lo, hi = _ci(a.get("ci"))
        rows.append(
            {
                "field": f,
                "block": block,
                "judge": j,
                "estimate": a.get("estimate"),
                "ci_low": lo,
                "ci_high": hi,
                "lambda": a.get("lambda"),
                "n_labeled": a.get("n_labeled"),
                "n_items": a.get("n_items"),
                "reason": a.get("reason"),
            }
        )

    for f, af in res["fields"].items():
        if "judges" not in af:
            add(f, BLOCK_ALL, "", {"reason": af.get("reason")})
            continue
        for j, a in af["judges"].items():
            add(f, BLOCK_ALL, j, a)
        for c, groups in af.get("strata", {}).items():
            for g, js in groups.items():
                for j, a in js.items():
                    add(f, f"{c}={g}", j, a)
    cols = ["field", "block", "judge", "estimate", "ci_low", "ci_high", "lambda", "n_labeled", "n_items"]
    return pd.DataFrame(rows, columns=[*cols, "reason"])


def latent_truth(
    ratings: Any,
    *,
    field: str | None = None,
    method: Method = "dawid_skene",
    humans_only: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """Latent-truth labels of one field (default: the only one) by Dawid-Skene or MACE
    (:func:`.latent.latent_truth_long`, crowd-kit's models; install ``hv-stats[latent]``):
    ``{"method", "items": DataFrame(item, label, probability, entropy, p(<category>)...),
    "raters": DataFrame(rater, accuracy)}``. ``humans_only``: leave the judges out of the fit
    (as the platform's acceptance policies do), so a judge can be compared with the result."""
    from .latent import latent_truth_long  # crowd-kit itself is imported when the model is fitted

    df = to_frame(ratings)
    fields = list(dict.fromkeys(df["field"].tolist()))
    if field is None:
        if len(fields) != 1:
            raise RatingTableError(f"several fields ({', '.join(fields)}): name one with field=")
        field = fields[0]
    elif field not in fields:
        raise RatingTableError(f"unknown field {field!r}; fields present: {fields}")
    sub = df[df["field"] == field]
    if humans_only:
        sub = sub[sub["rater_kind"] == "human"]
    res = latent_truth_long(
        sub["item"].tolist(), sub["rater"].tolist(), sub["value"].tolist(), method=method, seed=seed
    )
    items = pd.DataFrame({"item": list(res.item_ids), "label": list(res.labels)})
    probs = res.probabilities
    items["probability"] = [None if lab is None else float(max(p)) for lab, p in zip(res.labels, probs, strict=True)]
    items["entropy"] = res.entropy
    for k, cat in enumerate(res.categories):
        items[f"p({cat})"] = probs[:, k]
    raters = pd.DataFrame({"rater": list(res.accuracy), "accuracy": list(res.accuracy.values())})
    return {"method": res.method, "items": items, "raters": raters}


# ------------------------------------------------------------------------------ paper tables
def validation_input(
    ratings: Any,
    *,
    levels: Mapping[str, str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    min_rater_items: int = MIN_RATER_ITEMS,
) -> ValidationInput:
    """What a protocol's table function reads (:class:`.validation.ValidationInput`), from
    long ratings with numeric values (the paper tables compute on numbers: code labels first).
    Rater attributes come from ``rater.<name>`` columns (``rater.nationality``, as the
    platform's wide import names them); an optional ``order`` column (a number per rating:
    the order in which the rater was given the item) decides the rater slots of the slot
    tables, which otherwise follow the raters' names. ``levels``: field -> measurement level
    (the rubric's, in the platform)."""
    df = to_frame(ratings)
    if "item_pk" not in df.columns:
        df["item_pk"] = pd.factorize(df["item"], sort=True)[0]
    attribute_cols = {c: c[len("rater.") :] for c in df.columns if c.startswith("rater.")}
    raters: dict[str, RaterInfo] = {}
    for r, rows in df.groupby("rater", sort=True):
        first = rows.iloc[0]
        attributes = {name: first[c] for c, name in attribute_cols.items() if pd.notna(first[c]) and first[c] != ""}
        raters[str(r)] = RaterInfo(str(r), str(first["rater_kind"]), attributes)
    order: dict[tuple[int, str], int] = {}
    if "order" in df.columns:
        known = df[pd.to_numeric(df["order"], errors="coerce").notna()]
        for pk, r, o in zip(known["item_pk"], known["rater"], pd.to_numeric(known["order"]), strict=True):
            order.setdefault((int(pk), str(r)), o)
    return ValidationInput(
        frame=df.reset_index(drop=True),
        raters=raters,
        levels=dict(levels or {}),
        bootstrap=bootstrap,
        seed=seed,
        assignment_order=order,
        min_rater_items=min_rater_items,
    )


def table_frame(table: Table, display: bool = False) -> pd.DataFrame:
    """A :class:`.tables.Table` as a DataFrame (rows by label, the table's columns): the
    values, or with ``display`` the cells as the paper prints them (value and 95% CI)."""
    data = [[format_cell(c) if display else c.to_dict()["value"] for c in r.cells] for r in table.rows]
    out = pd.DataFrame(data, index=pd.Index([r.label for r in table.rows], name=table.row_header or None))
    out.columns = list(table.columns)
    out.attrs.update(key=table.key, title=table.title, caption=table.caption, notes=list(table.notes))
    return out


def paper_tables(
    ratings: Any,
    report: Callable[[ValidationInput], Sequence[Table]],
    *,
    levels: Mapping[str, str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    display: bool = False,
) -> dict[str, pd.DataFrame]:
    """A protocol's tables (``report``: its ``validation_report`` function) of the ratings, by
    table key, as :func:`table_frame` DataFrames."""
    inp = validation_input(ratings, levels=levels, bootstrap=bootstrap, seed=seed)
    return {t.key: table_frame(t, display=display) for t in report(inp)}
