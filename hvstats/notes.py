"""The notes of an agreement report: what makes a number uninformative or rough, said once here
and rendered by every output (the ``hv-stats`` / ``manage.py agreement`` text, JSON, Markdown
and LaTeX; the platform's agreement page, printable report, API and validation report).

A note is a dict: ``code`` (one of :data:`CODES`), where it applies (``field``, ``stratum``
as ``"column=value"`` or None for all items, ``judge`` or None for the humans, ``statistic``
or None), the numbers it rests on (``value``, ``n_items``, ``n_humans``, ``threshold``) and ``text`` in
English. A page translates by ``code`` and the numbers, never by parsing ``text``.

The codes:

- ``no_variation``: every rating is the same value. Humans: the chance-corrected coefficients
  are undefined (expected disagreement 0). A judge's alt-test: every human and the judge give
  one value, and the test passes trivially (omega = rho = 1, p = 0): it cannot tell.
- ``one_category``: every human rating of a judge's alt-test items is the same value; the
  humans never disagree, so the test says only whether the judge repeats that value.
- ``too_few_humans``: fewer than :data:`.answers.MIN_HUMANS_TESTED` humans tested by a judge's
  alt-test (the paper's minimum of three annotators).
- ``no_common_item``: the judge rated no item a human rated; nothing compares them.
- ``small_sample``: a coefficient (alpha, kappa, AC1/AC2, a correlation; a split-half ceiling;
  the pairs of a rater x rater matrix, :func:`pairwise_notes`) stands on fewer than
  :data:`SMALL_SAMPLE_ITEMS` items.
- ``exact_interval``: a 0/1 mean (a share) at 0% or 100%: its 95% interval is the exact
  binomial one (Clopper-Pearson), since the normal (Wald) and the bootstrap intervals have zero
  width there (:func:`exact_share_interval`).
- ``zero_width_interval``: a coefficient (a percent agreement below 100%, say) whose bootstrap
  interval has zero width: every item resample gives the same value
  (every item agrees alike: 0.333 [0.333, 0.333] on 3 items whose raters split 2 to 1). The
  interval is degenerate, not precise; HV says so rather than switch method, since no interval
  over so few alike items would be honest either.

**The small-sample threshold** (HV's stated rule, not a published cut-off): 30 items, the same
number the alt-test paper asks of each annotator before its normal approximation is used
(Calderon, Reichart and Dror, ACL 2025, FAQ "How many instances should I annotate?"). Below
it a percentile bootstrap over items has few distinct resamples and its interval is rough (an
alpha on 3 items has at most 10 distinct resamples). It is a floor, not enough: Krippendorff
(Content Analysis, 2nd ed., 2004, ch. 11, on the size of reliability samples, after Bloch and
Kraemer 1989) sizes a reliability sample by the probability of the rarest category, the
smallest alpha to be accepted and the level of significance, which usually asks for more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .answers import MIN_HUMANS_TESTED

#: a coefficient on fewer items than this carries a ``small_sample`` note (module docstring)
SMALL_SAMPLE_ITEMS = 30
CODES = (
    "no_variation",
    "one_category",
    "too_few_humans",
    "no_common_item",
    "small_sample",
    "exact_interval",
    "zero_width_interval",
)
#: the coefficients a small-sample note applies to (percent agreement is a share: at 0% or 100%
#: its interval is the exact one instead, ``exact_interval``)
COEFFICIENTS = frozenset(
    {
        "krippendorff_alpha",
        "fleiss_kappa",
        "gwet_ac1",
        "gwet_ac2",
        "gwet_ac2_linear",
        "gwet_ac2_quadratic",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "pearson",
        "spearman",
        "kendall",
    }
)
SMALL_SAMPLE_RULE = (
    f"a coefficient on fewer than {SMALL_SAMPLE_ITEMS} items is marked small: HV's rule, the alt-test "
    "paper's 30 items per annotator (Calderon, Reichart and Dror 2025, FAQ); Krippendorff (2004, ch. 11) "
    "sizes reliability samples by the rarest category and usually asks for more"
)


def exact_share_interval(mean: float | None, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """The Clopper-Pearson interval of a 0/1 mean at exactly 0 or 1 over ``n`` units, else None
    (the mean's own interval stands)."""
    # Clopper and Pearson 1934 (Biometrika 26(4)); one implementation, hvstats.validation's
    if mean is None or n <= 0 or mean not in (0.0, 1.0):
        return None
    from .validation import clopper_pearson

    return clopper_pearson(n if mean == 1.0 else 0, n, alpha)


def note(code: str, text: str, **where: Any) -> dict[str, Any]:
    """One note; ``where``: field, stratum, judge, statistic, value (an exact interval's share),
    n_items, n_humans, threshold."""
    if code not in CODES:
        raise ValueError(f"unknown note code {code!r}; one of {CODES}")
    keys = ("field", "stratum", "judge", "statistic", "value", "n_items", "n_humans", "threshold")
    return {"code": code, **{k: where.get(k) for k in keys}, "text": text}


def alt_test_notes(warnings: list[str], field: str, stratum: str | None, judge: str, n_humans: int) -> list[dict]:
    """The notes of one alt-test's :func:`.answers.degenerate_warnings` (same words)."""
    out = []
    for w in warnings:
        code = (
            "no_variation"
            if w.startswith("no variation")
            else "one_category"
            if w.startswith("one category")
            else "too_few_humans"
            if w.startswith("too few humans")
            else "no_common_item"
        )
        threshold = MIN_HUMANS_TESTED if code == "too_few_humans" else None
        out.append(
            note(
                code,
                f"{judge} on {_where(field, stratum)}: alt-test: {w}.",
                field=field,
                stratum=stratum,
                judge=judge,
                statistic="alt_test",
                n_humans=n_humans,
                threshold=threshold,
            )
        )
    return out


def _where(field: str, stratum: str | None) -> str:
    return f"{field} ({stratum})" if stratum else field


def _blocks(fo: Mapping[str, Any]) -> Iterator[tuple[str | None, Mapping[str, Any]]]:
    yield None, fo
    for col, groups in (fo.get("strata") or {}).items():
        for g, go in groups.items():
            yield f"{col}={g}", go


def _metric_notes(d: Any, field: str, stratum: str | None, judge: str | None, label: str) -> tuple[list, list]:
    """(small-sample labels as ``(label, n)``, exact-interval notes) of one metric result dict."""
    if not isinstance(d, Mapping) or "metric" not in d or d.get("value") is None:
        return [], []
    n = d.get("n_items")
    small = [(label, n)] if d["metric"] in COEFFICIENTS and n is not None and n < SMALL_SAMPLE_ITEMS else []
    exact = (
        [exact_interval_note(field, stratum, judge, label, float(d["value"]), n)]
        if d.get("ci_method") == "clopper_pearson"
        else []
    )
    ci = d.get("ci")
    if not exact and ci and ci[0] is not None and ci[0] == ci[1]:
        exact.append(_zero_width_note(field, stratum, judge, label, float(d["value"]), n))
    return small, exact


def _zero_width_note(field: str, stratum: str | None, judge: str | None, label: str, value: float, n: Any) -> dict:
    who = judge or "humans"
    return note(
        "zero_width_interval",
        f"{_where(field, stratum)}: {who}: {label} = {value:.3f} has a zero-width bootstrap interval on {n} items: "
        "every resample of the items gives the same value, so the interval is degenerate, not precise.",
        field=field,
        stratum=stratum,
        judge=judge,
        statistic=label,
        value=value,
        n_items=n,
    )


def _small_notes(small: list[tuple[str, int]], field: str, stratum: str | None, judge: str | None) -> list[dict]:
    """One ``small_sample`` note per number of items: the coefficients of one block and rater
    group (the humans, or one judge) that stand on it."""
    out = []
    for n in dict.fromkeys(k for _, k in small):
        labels = [label for label, k in small if k == n]
        who = judge if judge else "humans"
        out.append(
            note(
                "small_sample",
                f"{_where(field, stratum)}: {who}: {', '.join(labels)} stand{'s' if len(labels) == 1 else ''} on "
                f"{n} items, fewer than {SMALL_SAMPLE_ITEMS}: a small sample, the interval is rough.",
                field=field,
                stratum=stratum,
                judge=judge,
                statistic=", ".join(labels),
                n_items=n,
                threshold=SMALL_SAMPLE_ITEMS,
            )
        )
    return out


def exact_interval_note(field: str, stratum: str | None, judge: str | None, label: str, value: float, n: Any) -> dict:
    """The ``exact_interval`` note of ``label`` (a 0/1 mean at ``value`` 0 or 1 over ``n`` units)."""
    who = judge or "humans"
    return note(
        "exact_interval",
        f"{_where(field, stratum)}: {who}: {label} is {100 * value:.0f}% of {n} items: exact binomial "
        "(Clopper-Pearson) 95% interval, since the normal and bootstrap intervals have zero width there.",
        field=field,
        stratum=stratum,
        judge=judge,
        statistic=label,
        value=value,
        n_items=n,
    )


def block_notes(fo: Mapping[str, Any], field: str, stratum: str | None) -> list[dict[str, Any]]:
    """The notes of one field or stratum block of a report (:func:`.analysis.analyse_matrix`'s
    output with the verdicts of :func:`.report.agreement_report`)."""
    out: list[dict[str, Any]] = []
    if "humans_vs_humans" not in fo:
        return out
    hum = fo["humans_vs_humans"]
    if fo.get("n_categories") == 1:
        out.append(
            note(
                "no_variation",
                f"{_where(field, stratum)}: no variation: every rating is the same value, so the "
                "chance-corrected coefficients are undefined.",
                field=field,
                stratum=stratum,
                n_items=fo.get("n_items"),
            )
        )
    small: list[tuple[str, int]] = []
    for k, d in hum.items():
        got = _metric_notes(d, field, stratum, None, k)
        small += got[0]
        out += got[1]
    for k, d in (hum.get("leave_one_rater_out") or {}).items():
        got = _metric_notes(d, field, stratum, None, f"leave-one-out {k}")
        small += got[0]
        out += got[1]
    for k, d in (hum.get("split_half") or {}).items():
        # a split-half result's metric is "split_half_<coefficient>"
        if isinstance(d, Mapping) and str(d.get("metric", "")).removeprefix("split_half_") in COEFFICIENTS:
            got = _metric_notes({**d, "metric": k}, field, stratum, None, f"split-half {k}")
            small += got[0]
    out += _small_notes(small, field, stratum, None)
    out += pairwise_notes(hum.get("pairwise") or {}, field, stratum)
    for j, jd in (fo.get("judges_vs_humans") or {}).items():
        small = []
        for grp, words in (("vs_human_mean", "vs human mean"), ("vs_human_majority", "vs human majority")):
            for k, d in (jd.get(grp) or {}).items():
                got = _metric_notes(d, field, stratum, j, f"{k} {words}")
                small += got[0]
                out += got[1]
        out += _small_notes(small, field, stratum, j)
        a = jd.get("alt_test")
        if a and a.get("warnings"):
            out += alt_test_notes(a["warnings"], field, stratum, j, int(a.get("n_humans") or 0))
        p = jd.get("ppi") or {}
        for key, label in (("ci_method", "PPI++ mean"), ("classical_ci_method", "human-only mean")):
            if p.get(key) == "clopper_pearson":
                value = p["estimate"] if key == "ci_method" else p["classical_estimate"]
                out.append(exact_interval_note(field, stratum, j, label, float(value), p.get("n_labeled")))
    return out


def pairwise_notes(pairwise: Mapping[str, Any], field: str, stratum: str | None) -> list[dict[str, Any]]:
    """The ``small_sample`` notes of a rater x rater matrix (:func:`.analysis.analyse_matrix`'s
    ``"pairwise"``): its coefficients with pairs on fewer than :data:`SMALL_SAMPLE_ITEMS`
    items, one note per (pairs small, pairs in all, least items), ``n_items`` the least."""
    groups: dict[tuple[int, int, int], list[str]] = {}
    for metric, m in pairwise.items():
        pairs = [
            d for d in (m or {}).get("pairs", []) if d.get("value") is not None and d.get("metric") in COEFFICIENTS
        ]
        small = [int(d["n_items"]) for d in pairs if d.get("n_items") is not None and d["n_items"] < SMALL_SAMPLE_ITEMS]
        if small:
            groups.setdefault((len(small), len(pairs), min(small)), []).append(metric)
    out = []
    for (k, total, least), metrics in groups.items():
        label = f"pairwise {', '.join(metrics)} ({k} of {total} rater pairs)"
        out.append(
            note(
                "small_sample",
                f"{_where(field, stratum)}: raters: {label} stand on as few as {least} items, fewer than "
                f"{SMALL_SAMPLE_ITEMS}: a small sample, the intervals are rough.",
                field=field,
                stratum=stratum,
                statistic=label,
                n_items=least,
                threshold=SMALL_SAMPLE_ITEMS,
            )
        )
    return out


def report_notes(rep: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every note of an agreement report (``rep["fields"]``, each field then its strata), in
    report order; what the top-level ``"notes"`` of the report holds."""
    out: list[dict[str, Any]] = []
    for f, fo in (rep.get("fields") or {}).items():
        for stratum, b in _blocks(fo):
            out += block_notes(b, f, stratum)
    return out


def field_notes(notes: list[Mapping[str, Any]], field: str) -> list[Mapping[str, Any]]:
    return [n for n in notes if n.get("field") == field]


#: the paper tables' notes (English; the page translates them through agreement/table_strings.py)
SMALL_TABLE_NOTE = (
    "Small samples, fewer than %(n)d items (the interval is rough): %(count)d coefficients on %(least)d to "
    "%(most)d items, in the rows %(rows)s; columns %(columns)s."
)
EXACT_TABLE_NOTE = (
    "%(row)s: a mean at %(percent)s of %(n)d items, with the exact binomial (Clopper-Pearson) 95%% interval."
)


def _small_cells(table: Any) -> list[tuple[str, str, int]]:
    """(row, column, items) of a paper table's coefficient cells (format ``"r"``) on fewer than
    :data:`SMALL_SAMPLE_ITEMS` items."""
    return [
        (row.label, col, int(cell.n))
        for row in table.rows
        for col, cell in zip(table.columns, row.cells, strict=True)
        if cell.fmt == "r" and cell.value is not None and cell.n is not None and cell.n < SMALL_SAMPLE_ITEMS
    ]


def _exact_table_pattern() -> re.Pattern[str]:
    """:data:`EXACT_TABLE_NOTE` as a pattern: which of a table's notes are exact-interval notes."""
    parts = re.split(r"(%\(\w+\)[sd])", EXACT_TABLE_NOTE)
    body = "".join(
        {"%(row)s": "(?P<row>.+?)", "%(percent)s": "(?P<percent>\\d+)%", "%(n)d": "(?P<n>\\d+)"}.get(
            p, re.escape(p.replace("%%", "%"))
        )
        for p in parts
    )
    return re.compile("^" + body + "$")


def table_notes(tables: Iterable[Any], active_series: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The notes of a validation report (:class:`.tables.Table` list) as notes of this module,
    each with the ``table`` key it stands under: one ``small_sample`` note per table with
    coefficients on fewer than :data:`SMALL_SAMPLE_ITEMS` items (``n_items``: the least),
    one ``exact_interval`` note per 0/1 mean at 0% or 100% a table names; then the
    ``exact_interval`` notes of the active series (``agreement.active.series_notes``, their
    ``table`` ``active-<sample>``). What the report's top-level ``"notes"`` holds."""
    out: list[dict[str, Any]] = []
    exact = _exact_table_pattern()
    active_series = list(active_series)
    # an active table names its overall mean's exact interval; the series' own notes say it (and more)
    active_keys = {f"active-{s.get('sample')}" for s in active_series}
    for t in tables:
        small = _small_cells(t)
        if small:
            text = small_sample_table_note(t)
            found = note(
                "small_sample",
                text,
                statistic=", ".join(dict.fromkeys(c for _, c, _ in small)),
                n_items=min(n for *_, n in small),
                threshold=SMALL_SAMPLE_ITEMS,
            )
            out.append({**found, "table": t.key})
        zero = _zero_width_cells(t)
        if zero:
            found = note(
                "zero_width_interval", zero_width_table_note(t), statistic=", ".join(dict.fromkeys(c for _, c in zero))
            )
            out.append({**found, "table": t.key})
        for text in () if t.key in active_keys else t.notes:
            if m := exact.match(text):
                found = note(
                    "exact_interval", text, statistic=m["row"], value=int(m["percent"]) / 100, n_items=int(m["n"])
                )
                out.append({**found, "table": t.key})
    for s in active_series:
        out += [{**n, "table": f"active-{s.get('sample')}"} for n in s.get("notes", [])]
    return out


def small_sample_table_note(table: Any) -> str:
    """The note under a paper table (:class:`.tables.Table`) on its coefficient cells (format
    ``"r"``: correlations, kappas, alphas) that stand on fewer than :data:`SMALL_SAMPLE_ITEMS`
    items: how many, their least and most items, and the rows and columns they are in (a list
    of every cell made a LaTeX caption too long for TeX); "" when there is none."""
    small = _small_cells(table)
    if not small:
        return ""
    return SMALL_TABLE_NOTE % {
        "n": SMALL_SAMPLE_ITEMS,
        "count": len(small),
        "least": min(n for *_, n in small),
        "most": max(n for *_, n in small),
        "rows": ", ".join(dict.fromkeys(r for r, _, _ in small)),
        "columns": ", ".join(dict.fromkeys(c for _, c, _ in small)),
    }


ZERO_WIDTH_TABLE_NOTE = (
    "Zero-width intervals (every resample of the items gives the same value: degenerate, not precise): "
    "%(count)d cells, in the rows %(rows)s; columns %(columns)s."
)


def _zero_width_cells(table: Any) -> list[tuple[str, str]]:
    """(row, column) of a table's cells with a value and a bootstrap interval of zero width."""
    return [
        (row.label, col)
        for row in table.rows
        for col, cell in zip(table.columns, row.cells, strict=True)
        if cell.value is not None and cell.ci is not None and cell.ci[0] is not None and cell.ci[0] == cell.ci[1]
    ]


def zero_width_table_note(table: Any) -> str:
    """The note under a paper table on its cells whose interval has zero width (the
    ``zero_width_interval`` of the module docstring); "" when there is none."""
    cells = _zero_width_cells(table)
    if not cells:
        return ""
    return ZERO_WIDTH_TABLE_NOTE % {
        "count": len(cells),
        "rows": ", ".join(dict.fromkeys(r for r, _ in cells)),
        "columns": ", ".join(dict.fromkeys(c for _, c in cells)),
    }


def with_small_sample_note(table: Any) -> Any:
    """``table`` with :func:`small_sample_table_note` and :func:`zero_width_table_note` added
    to its notes (the same table when nothing is small or degenerate)."""
    from dataclasses import replace

    extra = tuple(n for n in (small_sample_table_note(table), zero_width_table_note(table)) if n)
    return replace(table, notes=(*table.notes, *extra)) if extra else table


def active_notes(active: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``exact_interval`` notes of the active estimates (:func:`.active_table.active_table`):
    a 0/1 field's active or human-only mean at 0% or 100% with its exact interval."""
    out: list[dict[str, Any]] = []
    for f, af in (active.get("fields") or {}).items():
        blocks = [(None, af.get("judges") or {})] + [
            (f"{c}={g}", js) for c, gs in (af.get("strata") or {}).items() for g, js in gs.items()
        ]
        for stratum, js in blocks:
            for j, a in js.items():
                for d, label in ((a, "active mean"), (a.get("human_only") or {}, "active human-only mean")):
                    if d.get("ci_method") == "clopper_pearson":
                        out.append(exact_interval_note(f, stratum, j, label, float(d["estimate"]), a.get("n_labeled")))
    return out
