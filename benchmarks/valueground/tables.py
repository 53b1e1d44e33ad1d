"""The ValueGround validation tables: the paper's tables computed from a project's ratings. Imported
only when a report is asked for (the preset's ``validation_report`` is a ``LazyReport``), because
they need numpy and the statistics core."""

from __future__ import annotations

import numpy as np

from hvstats.pair_groups import WHOLE
from hvstats.tables import Cell, Row, Table, raters_note
from hvstats.validation import HumanAgreement, ValidationInput, judge_and_ceiling

# --------------------------------------------------------------------------- validation report
# App. B.2, Table 4: the judge (an ensemble of two model judges, scores averaged) vs the mean
# human annotation, and the human reference: each annotator vs the mean of the other three.
TABLE4_FIELDS = (("Q1", "q1"), ("Q2", "q2"), ("Q3", "q3"), ("Q4", "q4"), ("Total", "total"))
TABLE4_CAPTION = (
    "Agreement between the automatic judge and human annotations (Pearson r, Spearman ρ; 95% "
    "bootstrap CI over items in brackets). Human agreement: each annotator vs the mean of the "
    "other annotators (leave-one-annotator-out), averaged (the paper's reference); pooled slot vs "
    "slot: the first-assigned annotator of each pair vs the second (and so on), pooled over pairs, "
    "averaged over slot pairs. Total = (Q1/2 + Q2/2 + Q3/2 + Q4)/4 (Eq. 8). Items: a judge's "
    "columns use the items it and at least one annotator rated (its n column); the human agreement "
    "the items two or more annotators rated; n = the items an annotator rated (an item only a judge "
    "rated counts nowhere)."
)
SLOT_COLUMNS = ("Human agreement, pooled slot vs slot: Pearson r", "Human agreement, pooled slot vs slot: Spearman ρ")


def _table4_columns(inp: ValidationInput, judges: list[str]) -> tuple[str, ...]:
    """Per judge its two coefficients and the items they stand on (``n``: rated by the judge and
    at least one human), then the human agreement and ``n``, the items a human rated."""
    cols: list[str] = []
    for j in judges:
        label = inp.judge_label(j)
        cols += [
            f"{label} vs mean human: Pearson r",
            f"{label} vs mean human: Spearman ρ",
            f"{label} vs mean human: n",
        ]
    return (*cols, "Human agreement: Pearson r", "Human agreement: Spearman ρ", *SLOT_COLUMNS, "n")


#: the cells of one judge (its coefficients and its n)
JUDGE_CELLS = 3


def _judge_cells(vs: dict | None) -> tuple[Cell, ...]:
    if vs is None:  # a judge without ratings of this field: its columns stay empty
        return (Cell.of(None), Cell.of(None), Cell(0, fmt="count"))
    return (Cell.of(vs["pearson"]), Cell.of(vs["spearman"]), Cell(vs["pearson"].n_items, fmt="count"))


def _table4_cells(judges: list[str], row: HumanAgreement) -> tuple[Cell, ...]:
    cells: list[Cell] = []
    for j in judges:
        cells += _judge_cells(row.judges.get(j))
    cells += [Cell.of(row.ceiling["pearson"]), Cell.of(row.ceiling["spearman"])]
    cells += [Cell.of(row.slots["pearson"]), Cell.of(row.slots["spearman"])]
    return (*cells, Cell(row.n_items, fmt="count"))


def _agreement(
    inp: ValidationInput,
    field: str,
    humans: list[str],
    judges: list[str],
    strata,
    seed_offset: int = 0,
    per_stratum: bool = True,
) -> dict:
    """Table 4's statistics of one field with ``humans`` as the human raters, for all items
    and per backbone (``strata``: the backbone of each of the field's items, or None). The
    human agreement (leave-one-out ceiling and slots) stands on the humans with at least
    ``inp.min_rater_items`` rated items in the field (:meth:`ValidationInput.agreement_raters`);
    the mean human the judges are compared with averages every human's rating."""
    g = inp.grid(field)
    present = [h for h in humans if h in g.raters]
    kept, _ = inp.agreement_raters(field, present)
    rows, _, S = inp.slots(field, kept)
    S_all = np.full((len(g.items), S.shape[1]), np.nan)
    S_all[rows] = S
    return judge_and_ceiling(
        g.values[:, [g.raters.index(h) for h in present]],
        g.values[:, [g.raters.index(j) for j in judges if j in g.raters]],
        S_all,
        [j for j in judges if j in g.raters],
        inp.bootstrap,
        inp.seed + seed_offset,
        strata,
        per_stratum=per_stratum,
        human_names=present,
        ceiling_humans=[present.index(h) for h in kept],
    )


def small_raters_note(inp: ValidationInput, fields: list[tuple[str, str]], humans: list[str]) -> str:
    """The caption's sentence on the minimum number of items per rater: the minimum, and the
    raters left out of the human agreement by name with their item counts per field."""
    left: dict[str, list[str]] = {}
    for label, f in fields:
        for name, n in inp.agreement_raters(f, humans)[1].items():
            left.setdefault(name, []).append(f"{n} in {label}")
    head = (
        f"Human agreement (both kinds) uses the annotators with at least {inp.min_rater_items} rated items "
        "in the field (the alt-test's minimum; report setting min_rater_items)"
    )
    if not left:
        return head + "; no annotator was left out."
    return head + "; left out, with their items: " + "; ".join(f"{r} ({', '.join(v)})" for r, v in left.items()) + "."


def validation_report(inp: ValidationInput) -> list[Table]:
    """Table 4, then the same split by annotator group (nationality) and by backbone (generator).

    With two or more backbones every bootstrap is drawn within backbone (the design's strata,
    see STUDY_DESIGN), so Table 4 and its backbone split come out of the same resamples."""
    humans, judges = inp.humans(), inp.judges()
    if not humans:
        return []
    backbones: list[str] = []
    if len(inp.frame) and "generator" in inp.frame.columns:
        # the backbones of the human-rated items: a judge's extra items split no table
        backbones = sorted(
            {
                v
                for _, f in TABLE4_FIELDS
                for v, rated in zip(inp.item_values(f, "generator"), inp.human_rated(f), strict=True)
                if v and rated
            }
        )
    split = len(backbones) > 1

    made: dict[str, np.ndarray] = {}

    def strata(field: str):
        if split and field not in made:
            made[field] = np.array([v or "" for v in inp.item_values(field, "generator")], dtype=object)
        return made.get(field)

    whole = {f: _agreement(inp, f, humans, judges, strata(f)) for _, f in TABLE4_FIELDS}
    cols = _table4_columns(inp, judges)

    def cells(f: str, row: HumanAgreement) -> tuple[Cell, ...]:
        return _table4_cells(judges, row)

    rows = tuple(Row(label, cells(f, whole[f][WHOLE])) for label, f in TABLE4_FIELDS)
    tables = [
        Table(
            key="valueground-table4",
            title="Table 4: Agreement between the automatic judge and human annotations",
            columns=cols,
            rows=rows,
            caption=TABLE4_CAPTION + (" Resampled within generation backbone." if split else ""),
            row_header="Field",
            notes=(
                raters_note(len(humans), len(judges)),
                small_raters_note(inp, list(TABLE4_FIELDS), humans),
            ),
        )
    ]
    groups: dict[str, list[str]] = {}
    for h in humans:
        groups.setdefault(inp.attribute(h, "nationality") or "(no nationality)", []).append(h)
    if len(groups) > 1:
        split_rows = [
            Row(f"{g}: {label}", cells(f, _agreement(inp, f, hs, judges, strata(f), k + 1, per_stratum=False)[WHOLE]))
            for k, (g, hs) in enumerate(sorted(groups.items()))
            for label, f in TABLE4_FIELDS
        ]
        tables.append(
            Table(
                key="valueground-table4-by-annotator-group",
                title="Table 4 by annotator group (nationality)",
                columns=cols,
                rows=tuple(split_rows),
                caption="As Table 4, with the mean human and the human agreement computed within each "
                "annotator group only ("
                + "; ".join(f"{g}: {', '.join(hs)}" for g, hs in sorted(groups.items()))
                + ").",
                row_header="Group: field",
            )
        )
    if split:
        split_rows = [Row(f"{b}: {label}", cells(f, whole[f][b])) for b in backbones for label, f in TABLE4_FIELDS]
        tables.append(
            Table(
                key="valueground-table4-by-backbone",
                title="Table 4 by generation backbone",
                columns=cols,
                rows=tuple(split_rows),
                caption="As Table 4, on the pairs of each generation backbone only.",
                row_header="Backbone: field",
            )
        )
    return tables
