"""The agreement report (:func:`.report.agreement_report`, plus ``"active"`` from
:func:`.active_table.active_table`) as text: the plain listing of ``--format table``
(:func:`format_table`) and paper-ready tables (:class:`.tables.Table`) for Markdown and LaTeX
(:func:`report_tables`). Shared by ``hv-stats`` and ``manage.py agreement`` (:mod:`.cli`)."""

from __future__ import annotations

from typing import Any

from .answers import field_status
from .tables import Cell, Row, Table
from .verdicts import answers_table


def _fmt(d: Any) -> str:
    if not isinstance(d, dict):
        return ""
    if d.get("value") is None:
        return d.get("reason") or "undefined"
    s = f"{d['value']:.3f}"
    if d.get("ci"):
        s += f" [{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]"
    if d.get("p_value") is not None:
        s += f" p={d['p_value']:.3g}"
    return s + f" n={d.get('n_items')}"


def answer_lines(rep: dict) -> list[str]:
    """The short block at the top of the text outputs: one answer per judge
    (:mod:`.answers`), then a blank line; nothing when the report has no answers."""
    answers = rep.get("answers") or []
    if not answers:
        return []
    from .answers import answer_sentence

    return (
        ["== one answer per judge (alt-test on all items of each field) =="]
        + [answer_sentence(a) for a in answers]
        + [""]
    )


def note_lines(rep: dict) -> list[str]:
    """The report's notes (:mod:`.notes`: no variation, one category, too few humans, no common
    item, small samples, exact intervals), one line each, then a blank line; nothing without."""
    notes = rep.get("notes") or []
    if not notes:
        return []
    return ["== notes: read these numbers with care ==", *(f"- {n['text']}" for n in notes), ""]


def format_table(rep: dict) -> str:
    lines = answer_lines(rep) + note_lines(rep)
    for f, fo in rep["fields"].items():
        lines.append(f"== field {f} (level {fo['level']}, {fo['n_items']} items) ==")
        blocks = [("all", fo)] + [(f"{c}={g}", go) for c, gs in fo.get("strata", {}).items() for g, go in gs.items()]
        for name, b in blocks:
            if "humans_vs_humans" not in b:
                lines.append(f"-- {name}: {b.get('reason')}")
                continue
            lines.append(f"-- {name}: humans {', '.join(b['humans'])}")
            h = b["humans_vs_humans"]
            for k, v in h.items():
                if isinstance(v, dict) and "metric" in v:
                    lines.append(f"   {k:<24} {_fmt(v)}")
            for k, v in h.get("leave_one_rater_out", {}).items():
                lines.append(f"   leave_one_out_{k:<10} {_fmt(v)}")
            for j, jd in b["judges_vs_humans"].items():
                for grp in ("vs_human_mean", "vs_human_majority"):
                    for k, v in jd.get(grp, {}).items():
                        lines.append(f"   judge {j} {grp} {k:<12} {_fmt(v)}")
                for k, v in jd.get("rank_among_humans", {}).items():
                    if v.get("rank") is not None:
                        lines.append(
                            f"   judge {j} rank ({k}) {v['rank']}/{v['of']} inside_spread={v['inside_spread']}"
                        )
                if "alt_test" in jd:
                    lines.extend(_alt_test_lines(j, jd["alt_test"]))
                if "ppi" in jd:
                    lines.extend(_ppi_lines(j, jd["ppi"]))
        af = rep.get("active", {}).get("fields", {}).get(f)
        if af:
            lines.extend(_active_lines(af))
    for j, jr in rep.get("alt_test_joint", {}).items():
        lines.append(f"== alt-test joint FDR, judge {j}: passed in {jr['passed_in']} of {jr['of']} ==")
        for env, a in jr["environments"].items():
            lines.extend(_alt_test_lines(j, a, env))
    return "\n".join(lines) + "\n"


def _alt_test_lines(j: str, a: dict, env: str = "") -> list[str]:
    head = f"   judge {j} alt_test{' ' + env if env else ''}"
    if a.get("winning_rate") is None:
        return [f"{head} {a.get('reason')}"]
    # a degenerate pass (no variation) is no pass: say what the answers say (hvstats.answers)
    status, why = field_status(a, a.get("warnings") or [])
    word = {"passed": "PASSED", "failed": "FAILED"}.get(
        status, f"CANNOT TELL ({why}; the test itself {'passed' if a['passed'] else 'failed'})"
    )
    out = [
        f"{head} {word} winning_rate={a['winning_rate']:.3f} "
        f"advantage_probability={a['advantage_probability']:.3f} epsilon={a['epsilon']} scoring={a['scoring']} "
        f"items={a['n_items']} dropped={a['n_items_dropped']}"
    ]
    for h, d in a["per_human"].items():
        p = "n/a" if d["p_value"] is None else f"{d['p_value']:.3g}"
        out.append(f"     human {h}: items={d['items']} p={p} rejected={d['rejected']}")
    for h, n in a["skipped_humans"].items():
        out.append(f"     human {h}: skipped ({n} items < 30)")
    out += [f"     note: {w}" for w in a.get("warnings") or ()]
    return out


def _rule(r: dict) -> str:
    """`` (lambda = N/(n+N): fewer than 100 labels)`` where a small-sample rule chose lambda."""
    rule = r.get("lambda_rule") or ""
    return f" ({rule})" if rule.startswith("lambda = ") else ""


def _ppi_lines(j: str, p: dict) -> list[str]:
    def ci(c: Any) -> str:
        return "undefined" if c is None else f"[{c[0]:.3f}, {c[1]:.3f}]"

    if p.get("estimate") is None:
        s = f"   judge {j} ppi {p.get('reason')}"
        if p.get("classical_estimate") is not None:
            s += f"; human-only {p['classical_estimate']:.3f} {ci(p['classical_ci'])}"
        return [s]
    out = [
        f"   judge {j} ppi mean {p['estimate']:.3f} {ci(p['ci'])} (human-only {p['classical_estimate']:.3f} "
        f"{ci(p['classical_ci'])}) lambda={p['lambda']:.3f}{_rule(p)} n_labeled={p['n_labeled']} "
        f"n_unlabeled={p['n_unlabeled']}"
    ]
    b = p.get("budget")
    if b:
        need = b.get("reason") or f"{b['ppi_items']} items ({b['ppi_human_ratings']} human ratings)"
        out.append(
            f"     budget for half-width {b['half_width']}: PPI {need}; human-only {b['classical_items']} items "
            f"({b['classical_human_ratings']} human ratings)"
        )
    return out


def _active_lines(af: dict) -> list[str]:
    if "judges" not in af:
        return [f"-- active: {af.get('reason')}"]
    out = []
    blocks = [("all", af["judges"])] + [
        (f"{c}={g}", js) for c, gs in af.get("strata", {}).items() for g, js in gs.items()
    ]
    for name, js in blocks:
        for j, a in js.items():
            if a.get("estimate") is None:
                out.append(f"   active {name} judge {j}: {a.get('reason')}")
                continue
            s = (
                f"   active {name} judge {j}: mean {a['estimate']:.3f} [{a['ci'][0]:.3f}, {a['ci'][1]:.3f}] "
                f"lambda={a['lambda']:.3f}{_rule(a)} labels={a['n_labeled']}/{a['n_items']}"
            )
            u = a.get("uniform") or {}
            if u.get("ppi_effective_labels") is not None:
                s += f"; uniform PPI++ needs {u['ppi_effective_labels']}, humans alone {u['human_only_effective_labels']:.0f}"
            out.append(s)
    return out


# ------------------------------------------------------------------ Markdown / LaTeX tables
def report_tables(rep: dict) -> list[Table]:
    """One table per field: a row per coefficient (humans vs humans, leave-one-out ceilings,
    each judge vs the human mean and majority, the alt-test and PPI++ verdicts), a column per
    block (all items, then each stratum); a second table per field for the active estimates;
    one for the joint alt-test. Values keep their 95% intervals; the formats are
    :mod:`.tables`'s, so they print as the platform's paper tables do."""
    out: list[Table] = []
    answers = answers_table(rep.get("answers") or [])  # .verdicts, shared with the platform
    if answers is not None:
        out.append(answers)
    for f, fo in rep["fields"].items():
        blocks = [("all", fo)] + [(f"{c}={g}", go) for c, gs in fo.get("strata", {}).items() for g, go in gs.items()]
        shown = [(name, _block_rows(b)) for name, b in blocks if "humans_vs_humans" in b]
        notes = tuple(f"{name}: {b.get('reason')}" for name, b in blocks if "humans_vs_humans" not in b)
        notes += _positive_notes(fo)
        # the report's notes on this field (hvstats/notes.py), under its table
        notes += tuple(n["text"] for n in rep.get("notes") or () if n.get("field") == f)
        if shown:
            out.append(
                _table(
                    f"agreement-{f}",
                    f"Agreement on {f}",
                    shown,
                    caption=f"Level {fo['level']}, {fo['n_items']} items; {_ci_words(rep)}.",
                    row_header="coefficient",
                    notes=notes,
                )
            )
        af = rep.get("active", {}).get("fields", {}).get(f)
        if af and "judges" in af:
            ablocks = [("all", af["judges"])] + [
                (f"{c}={g}", js) for c, gs in af.get("strata", {}).items() for g, js in gs.items()
            ]
            arows = [(name, {f"{j}: active mean": _active_cell(a) for j, a in js.items()}) for name, js in ablocks]
            share = f" Mean = share of {af['positive_label']!r}." if af.get("positive_label") is not None else ""
            out.append(
                _table(
                    f"active-{f}",
                    f"Active estimate of the mean of {f}",
                    arows,
                    caption="Active inference (Zrnic and Candès, ICML 2024); 95% CLT intervals; n = human labels."
                    + share,
                    row_header="estimate",
                )
            )
    joint = rep.get("alt_test_joint", {})
    if joint:
        rows = {}
        for j, jr in joint.items():
            for env, a in jr["environments"].items():
                rows[f"{j}: {env}"] = (_alt_cell(a), _passed_cell(a))
        out.append(
            Table(
                key="alt-test-joint",
                title="Alternative annotator test, one FDR correction per judge",
                columns=("winning rate", "passed"),
                rows=tuple(Row(label, cells) for label, cells in rows.items()),
                row_header="judge: environment",
            )
        )
    return out


def _positive_notes(fo: dict) -> tuple[str, ...]:
    """A two-label field's PPI++ means are shares of its second label: say which."""
    for jd in fo.get("judges_vs_humans", {}).values():
        label = (jd.get("ppi") or {}).get("positive_label")
        if label is not None:
            return (f"PPI++ and human-only means: share of {label!r}.",)
    return ()


def _ci_words(rep: dict) -> str:
    level = rep.get("settings", {}).get("ci_level")
    return f"{round(100 * level)}% bootstrap intervals" if level else "no intervals (--bootstrap 0)"


def _table(
    key: str,
    title: str,
    blocks: list[tuple[str, dict[str, Cell]]],
    caption: str = "",
    row_header: str = "",
    notes: tuple[str, ...] = (),
) -> Table:
    """Columns = blocks; rows = every label any block has, in first-seen order; a block
    without a row gets an empty cell that says so."""
    labels = list(dict.fromkeys(label for _, cells in blocks for label in cells))
    absent = Cell(None, note="not computed for this block")
    rows = tuple(Row(label, tuple(cells.get(label, absent) for _, cells in blocks)) for label in labels)
    return Table(
        key=key,
        title=title,
        columns=tuple(name for name, _ in blocks),
        rows=rows,
        caption=caption,
        row_header=row_header,
        notes=notes,
    )


def _block_rows(b: dict) -> dict[str, Cell]:
    cells: dict[str, Cell] = {}
    h = b["humans_vs_humans"]
    for k, v in h.items():
        if isinstance(v, dict) and "metric" in v:
            cells[f"humans: {k}"] = Cell.of(v)
    for k, v in h.get("leave_one_rater_out", {}).items():
        cells[f"humans: leave-one-out {k}"] = Cell.of(v)
    for j, jd in b["judges_vs_humans"].items():
        for grp, words in (("vs_human_mean", "vs human mean"), ("vs_human_majority", "vs human majority")):
            for k, v in jd.get(grp, {}).items():
                cells[f"{j} {words}: {k}"] = Cell.of(v)
        if "alt_test" in jd:
            cells[f"{j}: alt-test winning rate"] = _alt_cell(jd["alt_test"])
            cells[f"{j}: alt-test passed"] = _passed_cell(jd["alt_test"])
        if "ppi" in jd:
            p = jd["ppi"]
            n = p.get("n_labeled")
            cells[f"{j}: PPI++ mean"] = Cell(p.get("estimate"), _pair(p.get("ci")), n, "num", p.get("reason") or "")
            cells[f"{j}: human-only mean"] = Cell(p.get("classical_estimate"), _pair(p.get("classical_ci")), n, "num")
    return cells


def _pair(ci: Any) -> tuple[float, float] | None:
    return (float(ci[0]), float(ci[1])) if ci else None


def _alt_cell(a: dict) -> Cell:
    return Cell(a.get("winning_rate"), None, a.get("n_items"), "%", a.get("reason") or "")


def _passed_cell(a: dict) -> Cell:
    if a.get("winning_rate") is None:
        return Cell(None, fmt="text", note=a.get("reason") or "")
    status, why = field_status(a, a.get("warnings") or [])
    warn = "; ".join(a.get("warnings") or ())
    return Cell({"passed": "passed", "failed": "failed"}.get(status, "cannot tell"), fmt="text", note=warn or why)


def _active_cell(a: dict) -> Cell:
    return Cell(a.get("estimate"), _pair(a.get("ci")), a.get("n_labeled"), "num", a.get("reason") or "")
