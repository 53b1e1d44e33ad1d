"""The CULTIVate validation tables: the paper's tables computed from a project's ratings. Imported
only when a report is asked for (the preset's ``validation_report`` is a ``LazyReport``), because
they need numpy and the statistics core."""

from __future__ import annotations

import numpy as np

from hvstats.slots import slot_bootstrap
from hvstats.tables import Cell, Row, Table
from hvstats.validation import EXACT_SHARE_NOTE, ValidationInput, alpha_bootstrap, mean, over_strata, share

# the two regions of the paper's Tables 2-3, in its column order (GS before GN)
GN = "Global North"
GS = "Global South"

# --------------------------------------------------------------------------- validation report
# Sec. 4.2 "Correlation Metric & Inter-rater Agreement", Tables 2 and 6, App. A.4 "Inter-Rater
# Agreement" and Table 13. GT-FAITH of an image = the mean of its raters' GT-FAITH ratings (the
# "faith" question: "How well does this image show {activity} in {country}?"). The human
# reference is "human-human correlation": rater 1 vs rater 2 of each image, pooled over images
# (the raters of an image are drawn from many, so the two are its assignment slots).
FAITH_FIELD = "faith"
SCALES = (("GT-FAITH", "faith"), ("GT-EXAG", "exag"), ("GT-HAL", "hal"), ("GT-REALISM", "realism"))
HUMAN_ROW = "Human (rater 1 vs rater 2)"


def _region_order(values) -> list[str]:
    vals = sorted({v for v in values if v})
    return [v for v in (GS, GN) if v in vals] + [v for v in vals if v not in (GS, GN)]


def _items_of(inp: ValidationInput, column: str) -> dict[str, set[str]]:
    """Frame items with a human rating by the value of an item column (strata: region,
    generator, country): an item only a model rater rated adds no column or row to a table."""
    if not len(inp.frame) or column not in inp.frame.columns:
        return {}
    items = inp.frame.drop_duplicates("item").set_index("item")[column]
    items = items[items.index.isin(inp.human_items())]
    return {v: set(items.index[items == v]) for v in items.unique() if v}


def _judge_series(inp: ValidationInput) -> list[tuple[str, object]]:
    """(row label, item -> value) of every numeric field of every model rater: a judge's
    answers (its GT-FAITH / HAL / EXAG prompts) and an imported rater's metrics (e.g. AHEaD
    FAITH, CLIPScore); judges by name, their rubric scales first, then the metrics by name."""
    out = []
    if not len(inp.frame):
        return out
    models = inp.frame[inp.frame["rater_kind"] == "model"]
    for j in inp.judges():
        mine = models[models["rater"] == j]
        known = [f for _, f in SCALES]
        fields = sorted(set(mine["field"]), key=lambda f: (known.index(f) if f in known else len(known), f.lower()))
        for f in fields:
            vals = mine.loc[mine["field"] == f].set_index("item")["value"]
            vals = vals.apply(lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan)
            if vals.notna().any():
                out.append((f"{inp.judge_label(j)}: {f}", vals))
    return out


def _spearman_cells(inp: ValidationInput, series, gt, slots, subsets, seed: int):
    """One row per judge field and the human row: Spearman with GT-FAITH (the human row: rater
    1 vs rater 2) on each item subset; (rows, per row the (result, boot) of each subset)."""
    rows = []
    for r, (label, vals) in enumerate([*series, (HUMAN_ROW, None)]):
        per = []
        for c, items in enumerate(subsets):
            sd = seed + 1000 * r + c
            if vals is None:
                S = slots[slots.index.isin(items)].to_numpy(dtype=float)
                res, boot = slot_bootstrap(S, "spearman", inp.bootstrap, sd)
            else:
                idx = sorted(i for i in items if i in gt.index)
                x = gt.reindex(idx).to_numpy(dtype=float)
                y = vals.reindex(idx).to_numpy(dtype=float)
                res, boot = slot_bootstrap(np.column_stack([x, y]), "spearman", inp.bootstrap, sd)
            per.append((res, boot))
        rows.append((label, per))
    return rows


def faithfulness_validation_report(inp: ValidationInput) -> list[Table]:
    """Table 2 (Spearman with GT-FAITH by region), Table 6 (by T2I model), the App. A.4
    agreement per country and by region, and Table 13 (mean (SD) of each scale per country)."""
    humans = inp.humans()
    if not humans:
        return []
    H = inp.wide(FAITH_FIELD, humans).dropna(how="all")  # the images a human rated
    gt = H.mean(axis=1, skipna=True).dropna()  # GT-FAITH per image
    slots = inp.by_slot(FAITH_FIELD, humans)
    series = _judge_series(inp)
    tables = []

    regions = _items_of(inp, "region")
    region_cols = _region_order(regions)
    all_items = set(gt.index)
    subsets = [regions[r] for r in region_cols] + [all_items]
    rows = []
    for label, per in _spearman_cells(inp, series, gt, slots, subsets, inp.seed):
        cells = [Cell.of(res) for res, _ in per]
        rows.append(Row(label, (*cells, Cell(per[-1][0].n_items, fmt="count"))))
    tables.append(
        Table(
            key="cultivate-table2",
            title="Table 2: Spearman correlation with GT-FAITH by region",
            columns=(*region_cols, "All", "n images (All)"),
            rows=tuple(rows),
            caption="Spearman ρ of every model rater's scores (judge answers and imported metrics) with "
            "GT-FAITH, the mean of the image's human GT-FAITH ratings, on the images of each region. "
            "Human: rater 1 vs rater 2 of each image (assignment order), pooled over images. 95% "
            "bootstrap CIs over images. Paper (All): GPT-4o 0.48, FAITH (InternVL3) 0.47, Human 0.58.",
            row_header="Metric / judge",
        )
    )

    generators = _items_of(inp, "generator")
    if generators:
        gen_cols = sorted(generators)
        rows = []
        for label, per in _spearman_cells(inp, series, gt, slots, [generators[g] for g in gen_cols], inp.seed + 500):
            avg = over_strata([res.value for res, _ in per], [b for _, b in per], "mean", "spearman")
            rows.append(Row(label, (*(Cell.of(res) for res, _ in per), Cell.of(avg))))
        tables.append(
            Table(
                key="cultivate-table6",
                title="Table 6: Per-model correlation with GT-FAITH",
                columns=(*gen_cols, "Avg."),
                rows=tuple(rows),
                caption="As Table 2, on the images of each T2I model; Avg. = the mean over the models "
                "(its CI from the models' independent bootstraps). Paper (Avg.): GPT-4o 0.43, ALIGN "
                "(InternVL3) 0.38, Human 0.55.",
                row_header="Metric / judge",
            )
        )

    composite = _composite_table(inp, gt, subsets, region_cols)
    if composite is not None:
        tables.append(composite)
    tables += _agreement_tables(inp, H, slots, regions, region_cols)
    tables.append(_scale_table(inp, humans, regions, region_cols))
    return tables


# Table 3 ("Necessity of composite metrics"): an AHEaD judge's ALIGN, ALIGN+HAL and FAITH against
# GT-FAITH per region. The AHEaD judge (judges/backends/ahead.py) stores ALIGN and ALIGN+HAL as
# the metrics below and FAITH as its "faith" answer, 1 + 4 FAITH (monotone: the same Spearman).
AHEAD_COMPONENTS = (("ALIGN", "ahead_align"), ("ALIGN+HAL", "ahead_align_hal"), ("FAITH", "faith"))


def _composite_table(inp: ValidationInput, gt, subsets, region_cols) -> Table | None:
    """Table 3 for every model rater carrying AHEaD's ALIGN metric (a run or imported AHEaD
    judge); None without one."""
    models = inp.frame[inp.frame["rater_kind"] == "model"] if len(inp.frame) else inp.frame
    rows = []
    for r, j in enumerate(inp.judges()):
        mine = models[models["rater"] == j]
        if AHEAD_COMPONENTS[0][1] not in set(mine["field"]):
            continue
        cells = []
        for c, (_, f) in enumerate(AHEAD_COMPONENTS):
            vals = mine.loc[mine["field"] == f].set_index("item")["value"]
            vals = vals.apply(lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan)
            for k, items in enumerate(subsets):
                idx = sorted(i for i in items if i in gt.index)
                xy = np.column_stack([gt.reindex(idx).to_numpy(dtype=float), vals.reindex(idx).to_numpy(dtype=float)])
                res, _ = slot_bootstrap(xy, "spearman", inp.bootstrap, inp.seed + 7000 + 100 * r + 10 * c + k)
                cells.append(Cell.of(res))
        rows.append(Row(inp.judge_label(j), tuple(cells)))
    if not rows:
        return None
    return Table(
        key="cultivate-table3",
        title="Table 3: Necessity of composite metrics (Spearman with GT-FAITH)",
        columns=tuple(f"{label} {col}" for label, _ in AHEAD_COMPONENTS for col in (*region_cols, "All")),
        rows=tuple(rows),
        caption="Spearman ρ with GT-FAITH of each AHEaD judge's ALIGN (Eq. 1), ALIGN+HAL (mean of ALIGN and "
        "1 - HAL) and FAITH (Eq. 5, stored as its GT-FAITH answer 1 + 4 FAITH, which ranks alike) on the "
        "images of each region. 95% bootstrap CIs over images. Paper (All, InternVL3): ALIGN 0.41, "
        "ALIGN+HAL 0.44, FAITH 0.47.",
        row_header="AHEaD judge",
    )


def _agreement_tables(inp: ValidationInput, H, slots, regions, region_cols) -> list[Table]:
    """App. A.4: Krippendorff's alpha (ordinal) and Cohen's kappa rater 1 vs rater 2 per country;
    their mean (SD) over the countries of each region."""
    countries = _items_of(inp, "country")
    region_of = {c: next((r for r in region_cols if items & regions[r]), "") for c, items in countries.items()}
    order = sorted(countries, key=lambda c: (region_cols.index(region_of[c]) if region_of[c] else 99, c))
    per: dict[str, tuple] = {}
    rows = []
    for k, c in enumerate(order):
        Hc = H[H.index.isin(countries[c])]
        Sc = slots[slots.index.isin(countries[c])].to_numpy(dtype=float)
        a, ab = alpha_bootstrap(Hc.to_numpy(dtype=float), "ordinal", inp.bootstrap, inp.seed + 2000 + k)
        kap, kb = slot_bootstrap(Sc, "cohen_kappa", inp.bootstrap, inp.seed + 3000 + k)
        per[c] = (a, ab, kap, kb)
        rows.append(
            Row(
                c,
                (
                    Cell(region_of[c] or "", fmt="text"),
                    Cell.of(a),
                    Cell.of(kap),
                    Cell(a.n_items, fmt="count"),
                    Cell(int(Hc.notna().any(axis=0).sum()), fmt="count"),
                ),
            )
        )
    by_country = Table(
        key="cultivate-agreement-by-country",
        title="Inter-rater agreement per country (App. A.4)",
        columns=("Region", "Krippendorff's α (ordinal)", "Cohen's κ, rater 1 vs rater 2", "n images", "n raters"),
        rows=tuple(rows),
        caption="GT-FAITH ratings of the images of each country: Krippendorff's α at the ordinal level "
        "over the images rated twice, and Cohen's κ (unweighted) between the first and the second "
        "rater of each image (assignment order; the mean over slot pairs for images with more raters). "
        "95% bootstrap CIs over images. Paper: α 0.15-0.62. Every rater counts whatever their number of "
        "images (the report's min_rater_items is for the ceilings that average one coefficient per rater): "
        "α and the rater 1 vs rater 2 κ pool the images, each image's pair of ratings counted once.",
        row_header="Country",
    )
    rows = []
    groups = [(r, [c for c in order if region_of[c] == r]) for r in region_cols] + [("All", order)]
    S_all = slots.to_numpy(dtype=float)
    for k, (label, cs) in enumerate(groups):
        alphas = [per[c][0].value for c in cs]
        kappas = [per[c][2].value for c in cs]
        items = set().union(*(countries[c] for c in cs)) if cs else set()
        S = S_all if label == "All" else slots[slots.index.isin(items)].to_numpy(dtype=float)
        pooled, _ = slot_bootstrap(S, "cohen_kappa", inp.bootstrap, inp.seed + 4000 + k)
        defined = [v for v in alphas if v is not None]
        rows.append(
            Row(
                label,
                (
                    Cell.of(over_strata(alphas, [per[c][1] for c in cs], "mean")),
                    Cell.of(over_strata(alphas, [per[c][1] for c in cs], "sd")),
                    Cell(min(defined) if defined else None),
                    Cell(max(defined) if defined else None),
                    Cell.of(over_strata(kappas, [per[c][3] for c in cs], "mean")),
                    Cell.of(pooled),
                    Cell(len(defined), fmt="count"),
                ),
            )
        )
    by_region = Table(
        key="cultivate-agreement-by-region",
        title="Inter-rater agreement by region (App. A.4)",
        columns=(
            "Mean α over countries",
            "SD of α over countries",
            "Min α",
            "Max α",
            "Mean κ over countries",
            "Cohen's κ, rater 1 vs rater 2 (pooled)",
            "n countries",
        ),
        rows=tuple(rows),
        caption="Summaries over the countries of each region of the per-country values (SD with ddof=1; "
        "CIs from the countries' independent bootstraps), and Cohen's κ between the first and the "
        "second rater pooled over the region's images. Paper: α SD 0.13, GN mean 0.28, GS mean 0.35; "
        "κ between the two annotator groups, mean 0.50.",
        row_header="Region",
    )
    return [by_country, by_region]


def _scale_table(inp: ValidationInput, humans, regions, region_cols) -> Table:
    """Table 13: mean (SD) of each scale per country and region, over the images' scores."""
    countries = _items_of(inp, "country")
    region_of = {c: next((r for r in region_cols if items & regions[r]), "") for c, items in countries.items()}
    order = sorted(countries, key=lambda c: (region_cols.index(region_of[c]) if region_of[c] else 99, c))
    scores = {f: inp.wide(f, humans).mean(axis=1, skipna=True).dropna() for _, f in SCALES}
    groups = [(c, countries[c]) for c in order] + [(r, regions[r]) for r in region_cols]
    rows = []
    for k, (label, items) in enumerate(groups):
        cells = []
        n = 0
        for s, (_, f) in enumerate(SCALES):
            v = scores[f][scores[f].index.isin(items)].to_numpy(dtype=float)
            cells += [
                Cell.of(mean(v, inp.bootstrap, inp.seed + 5000 + 10 * k + s), "num"),
                Cell(float(np.std(v, ddof=1)) if len(v) > 1 else None, None, len(v), "num"),
            ]
            n = max(n, len(v))
        rows.append(Row(label, (*cells, Cell(n, fmt="count"))))
    cols = [c for name, _ in SCALES for c in (f"{name} mean", f"{name} SD")]
    return Table(
        key="cultivate-table13",
        title="Table 13: Human evaluation scores by country",
        columns=(*cols, "n images"),
        rows=tuple(rows),
        caption="Mean and standard deviation (ddof=1) on the 5-point scales over the images of each "
        "country and region, an image's score being the mean of its raters' ratings. 95% bootstrap "
        "CIs of the means over images.",
        row_header="Country / region",
    )


# Sec. 4.2 "Annotations" and App. A.5, Table 11: precision = share of descriptor judgements marked
# correct, per country and averaged over countries (90.27 = the mean of the seven countries);
# recall proxies: the mean coverage rating (4.5/5) and the annotators reporting a missing
# descriptor (26 of 378 forms).
def _descriptor_row(label: str, fr, inp: ValidationInput, seed: int) -> tuple[Row, np.ndarray, np.ndarray]:
    """One row of Table 11 from the human rows ``fr`` of a country (or all); also the
    descriptor judgements and the precision's bootstrap values."""
    cv = fr.loc[fr["field"] == "descriptor_correct[*]", "value"].astype(float).to_numpy()
    cov = fr.loc[fr["field"] == "coverage", "value"].astype(float).to_numpy()
    mv = fr.loc[fr["field"] == "reported_missing", "value"].astype(float).to_numpy()
    # the exact bootstrap of Bernoulli units: Binomial(n, p_hat) / n (as ``share``'s interval)
    boot = np.zeros(0)
    if inp.bootstrap and len(cv):
        boot = np.random.default_rng(seed + 3).binomial(len(cv), cv.mean(), inp.bootstrap) / len(cv)
    row = Row(
        label,
        (
            Cell.of(share(cv, inp.bootstrap, seed, "precision"), "%"),
            Cell.of(mean(cov, inp.bootstrap, seed + 1), "num"),
            Cell.of(share(mv, inp.bootstrap, seed + 2, "reported_missing"), "%"),
            Cell(int(mv.sum()), fmt="count"),
            Cell(len(cv), fmt="count"),
            Cell(len(cov), fmt="count"),
        ),
    )
    return row, cv, boot


def descriptors_validation_report(inp: ValidationInput) -> list[Table]:
    """Table 11 per country, the average over countries, and all judgements pooled."""
    if not inp.humans():
        return []
    fr = inp.frame[inp.frame["rater_kind"] == "human"]
    rows, precisions, boots = [], [], []
    for k, c in enumerate(sorted(c for c in fr["country"].unique() if c)):
        row, cv, boot = _descriptor_row(c, fr[fr["country"] == c], inp, inp.seed + 10 * k)
        rows.append(row)
        precisions.append(float(cv.mean()) if len(cv) else None)
        boots.append(boot)
    avg = over_strata(precisions, boots, "mean", "precision")
    blank = Cell(None, fmt="num", note="not averaged over countries")
    count = Cell(None, fmt="count", note="not averaged over countries")
    rows.append(Row("Average over countries", (Cell.of(avg, "%"), blank, blank, count, count, count)))
    rows.append(_descriptor_row("All judgements", fr, inp, inp.seed + 10 * len(rows))[0])
    return [
        Table(
            key="cultivate-table11",
            title="Table 11: LLM-generated descriptors validation by humans",
            columns=(
                "Precision (marked correct)",
                "Mean coverage (1-5)",
                "Share reporting a missing descriptor",
                "Forms reporting a missing descriptor",
                "n descriptor judgements",
                "n forms",
            ),
            rows=tuple(rows),
            caption="Precision: the share of the human descriptor judgements marked correct; coverage: "
            "the mean overall coverage rating; missing: the share of forms listing a missing "
            "descriptor. Average over countries: the mean of the per-country precisions (CI from the "
            "countries' independent bootstraps). 95% bootstrap CIs over judgements / forms. Paper: "
            "precision 90.27% on average (minimum 85.21%, Iran), coverage 4.5/5, 26 of 378 "
            "annotators reported a missing descriptor.",
            row_header="Country",
            notes=(EXACT_SHARE_NOTE,),
        )
    ]
