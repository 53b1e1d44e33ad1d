"""CULTIVate / AHEaD (cultivate-ahead.txt): the human faithfulness form (Sec. 4.2, Tables 29-31
anchors) and the reference-descriptor validation form (Sec. 4.2, App. A.5, Table 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from stats.slots import slot_bootstrap
from stats.tables import Cell, Row, Table
from stats.validation import ValidationInput, alpha_bootstrap, mean, over_strata, share

from .base import DirectJudge, JudgePrompt, Preset, StudyDesign
from .demo_images import draw_image

GN = "Global North"
GS = "Global South"

# --------------------------------------------------------------------------- faithfulness
FAITH_PROTOCOL = (
    "CULTIVate / AHEaD (cultivate-ahead.txt), Sec. 4.2 Human Evaluation Setup and App. A.4/A.6. "
    'Each item is one T2I image generated from "A photorealistic photo of {activity} in {country}." '
    "Two raters of the image's country rate GT-FAITH (main gold standard), GT-EXAG, GT-HAL and "
    "GT-REALISM on 5-point Likert scales and write a required free-text rationale describing the "
    "errors in the image. Anchors follow the paper's MLLM-as-a-Judge prompts (Tables 29-31; ALIGN "
    "anchors for GT-FAITH); realism wording is our default (not given in the paper). Statistics: "
    "Spearman of metrics/judges with GT-FAITH per region (GN/GS/All) and T2I model, Krippendorff "
    "alpha (ordinal) per country, Cohen kappa between the two rater groups."
)

FAITH_INSTRUCTIONS = """\
We conduct a human study to validate our metrics for Faithfulness (i.e., Alignment, Hallucination, and Exaggeration) and realism (whether image looks realistic).

The image was generated with the prompt "A photorealistic photo of {activity} in {country}." (the activity and country are shown with the image). Rate it for that country: where the wording below says "your country", the form names the image's country.

We collected 3 ground-truth (GT) labels using a 5-point Likert scale: GT-FAITH (main gold standard) measures overall faithfulness according to annotators - How well does this image show {activity} in your country?; GT-EXAG measures image exaggeration - How exaggerated is the image?; GT-HAL measures hallucinations - How incorrect is the image? (activity/culture).

Scale anchors (mind the direction: 5 is best for faithfulness and realism, but worst for exaggeration and hallucination):
- Faithfulness (ALIGN): 1 = Not well at all (completely wrong or unrelated); 2 = Slightly relevant; 3 = Somewhat accurate; 4 = Mostly accurate; 5 = Exactly as expected for this country.
- Hallucination (HAL), whether an image contains incorrect elements with respect to the mentioned activity and country: 1 = Not at all. All elements seem appropriate.; 2 = Slightly. One minor element seems foreign.; 3 = Somewhat. A few elements feel unusual.; 4 = Mostly. Many elements appear incorrect or from another culture.; 5 = Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another country.
- Exaggeration (EXAG), how exaggerated an image is in terms of cultural elements (e.g., attire, objects, background, art/design): 1 = Appropriate and balanced.; 2 = Slightly decorative but within cultural norms.; 3 = Several features feel idealized or overly emphasized.; 4 = Many elements feel exaggerated and unrealistic.; 5 = Strongly stereotypical, misleading, or culturally irrelevant.
- Realism (GT-REALISM): How realistic does this image look? 1 = Not realistic at all (clearly synthetic or broken) ... 5 = Completely realistic (could be a real photo).

Quality control: the form may contain attention checks (e.g., selecting a pre-mentioned number) and repeated questions to test consistency, and a free-text rationale describing the errors in the image is required."""

FAITH_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "label": "Generated image"},
    {"name": "activity", "type": "text", "label": "Activity"},
    {"name": "prompt", "type": "text", "required": False, "label": "T2I prompt"},
    {"name": "seed", "type": "number", "required": False, "display": False, "label": "Seed"},
    # What the AHEaD judge compares the image with (Sec. 3.1-3.2), never shown to raters: the
    # reference descriptors D^ref per dimension ({"setting"|"objects"|"attire"|"interaction"|
    # "spatial": [descriptor, ...]}, the proposer-refiner's output) and, optionally, the stereotype
    # candidates S_r of EXAG (Table 28; asked of the judge's model when absent).
    {
        "name": "reference_descriptors",
        "type": "object",
        "required": False,
        "display": False,
        "label": "Reference descriptors (AHEaD)",
    },
    {
        "name": "stereotypes",
        "type": "list",
        "of": "text",
        "required": False,
        "display": False,
        "label": "Stereotype candidates (AHEaD EXAG)",
    },
]

ALIGN_OPTIONS = [
    {"value": 1, "label": "Not well at all (completely wrong or unrelated)"},
    {"value": 2, "label": "Slightly relevant"},
    {"value": 3, "label": "Somewhat accurate"},
    {"value": 4, "label": "Mostly accurate"},
    {"value": 5, "label": "Exactly as expected for this country"},
]
EXAG_OPTIONS = [
    {"value": 1, "label": "Appropriate and balanced."},
    {"value": 2, "label": "Slightly decorative but within cultural norms."},
    {"value": 3, "label": "Several features feel idealized or overly emphasized."},
    {"value": 4, "label": "Many elements feel exaggerated and unrealistic."},
    {"value": 5, "label": "Strongly stereotypical, misleading, or culturally irrelevant."},
]
HAL_OPTIONS = [
    {"value": 1, "label": "Not at all. All elements seem appropriate."},
    {"value": 2, "label": "Slightly. One minor element seems foreign."},
    {"value": 3, "label": "Somewhat. A few elements feel unusual."},
    {"value": 4, "label": "Mostly. Many elements appear incorrect or from another culture."},
    {
        "value": 5,
        "label": "Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another country.",
    },
]
# our default: the paper gives no realism wording or anchors
REALISM_OPTIONS = [
    {"value": 1, "label": "Not realistic at all (clearly synthetic or broken)"},
    {"value": 2, "label": "Slightly realistic (obvious artefacts)"},
    {"value": 3, "label": "Somewhat realistic"},
    {"value": 4, "label": "Mostly realistic (minor artefacts)"},
    {"value": 5, "label": "Completely realistic (could be a real photo)"},
]

FAITH_RUBRIC: dict[str, Any] = {
    "title": "CULTIVate cultural faithfulness",
    "instructions": FAITH_INSTRUCTIONS,
    "questions": [
        {
            "id": "faith",
            "type": "scale",
            "label": "GT-FAITH",
            # The paper's question ("... in your country?", its raters being of the image's
            # country) with the item's country filled in: an annotator may rate another
            # country's image (issue 14).
            "prompt": "How well does this image show {activity} in {country}?",
            "help": "1 = Not well at all (completely wrong or unrelated) ... 5 = Exactly as expected for this country.",
            "options": ALIGN_OPTIONS,
        },
        {
            "id": "exag",
            "type": "scale",
            "label": "GT-EXAG",
            "prompt": "How exaggerated is the image?",
            "help": "How exaggerated the image is in terms of cultural elements (e.g., attire, objects, "
            "background, art/design).",
            "reversed": True,
            "options": EXAG_OPTIONS,
        },
        {
            "id": "hal",
            "type": "scale",
            "label": "GT-HAL",
            "prompt": "How incorrect is the image? (activity/culture)",
            "help": "Whether the image contains incorrect elements with respect to the mentioned activity and country.",
            "reversed": True,
            "options": HAL_OPTIONS,
        },
        {
            "id": "realism",
            "type": "scale",
            "label": "GT-REALISM",
            "prompt": "How realistic does this image look?",
            "options": REALISM_OPTIONS,
        },
        {
            "id": "rationale",
            "type": "text",
            "label": "Rationale",
            "prompt": "Describe the errors in the image (required free-text rationale).",
            "required": True,
            "min_length": 10,
        },
    ],
}

# (country, region, category, activity)
_FAITH_DEMO = [
    ("Iran", GS, "eating", "eating at home"),
    ("India", GS, "celebration", "celebrating Diwali"),
    ("Nigeria", GS, "wedding", "a traditional wedding"),
    ("Indonesia", GS, "game", "playing elephant ant man"),
    ("Mexico", GS, "funeral", "a funeral"),
    ("Germany", GN, "concert", "attending an outdoor concert"),
    ("Spain", GN, "dance", "dancing flamenco"),
    ("Italy", GN, "greeting", "greeting a friend"),
    ("USA", GN, "religious practice", "a Sunday church service"),
]
_T2I = ("Stable Diffusion 3.5", "FLUX", "Qwen-Image")


def faithfulness_demo_items(folder: Path) -> list[dict[str, Any]]:
    items = []
    for i, (country, region, category, activity) in enumerate(_FAITH_DEMO, start=1):
        name = draw_image(folder, f"cultivate_{i:02d}.png", activity, subtitle=f"{country} - {_T2I[i % 3]}")
        items.append(
            {
                "id": f"cultivate-{i:02d}",
                "image": name,
                "activity": activity,
                "country": country,
                "region": region,
                "category": category,
                "generator": _T2I[i % 3],
                "prompt": f"A photorealistic photo of {activity} in {country}.",
                "seed": 42 + (i % 10),
            }
        )
    return items


# CULTIVate / AHEaD, App. A, Tables 29-31 (MLLM-as-a-Judge prompts), verbatim: one prompt per
# question (ALIGN -> faith, HAL, EXAG). The paper's {{prompt}} / {{country}} are the item's T2I
# prompt and country.
_SCORE_FORMAT = (
    "Respond with ONLY the score in the exact format below:\n\nscore is < num >\n\n"
    "Do not include any other text, explanation, or formatting."
)
JUDGE_ALIGN = {
    "system": (
        "You are a helpful assistant scoring how well an image depicts an activity as it would typically "
        "appear in the specified country. Provide a rating from 1 to 5 using the guidelines below. Only output "
        "the score in the required format.\n\nScoring Scale:\n\n- 1 = Not well at all (completely wrong or "
        "unrelated)\n- 2 = Slightly relevant\n- 3 = Somewhat accurate\n- 4 = Mostly accurate\n- 5 = Exactly as "
        "expected for this country\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
JUDGE_HAL = {
    "system": (
        "You are a helpful assistant scoring whether an image contains incorrect elements with respect to the "
        "mentioned activity and country. Rate on a scale from 1 to 5 using the rules below. Only output the "
        "score in the required format.\n\nScoring Scale:\n\n- 1 = Not at all. All elements seem appropriate.\n"
        "- 2 = Slightly. One minor element seems foreign.\n- 3 = Somewhat. A few elements feel unusual.\n"
        "- 4 = Mostly. Many elements appear incorrect or from another culture.\n- 5 = Strongly. The image is "
        "completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another "
        "country.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
JUDGE_EXAG = {
    "system": (
        "You are a helpful assistant scoring how exaggerated an image is in terms of cultural elements (e.g., "
        "attire, objects, background, art/design). Rate on a scale from 1 to 5 using the rules below. Only "
        "output the score in the required format.\n\nScoring Scale:\n\n- 1 = Appropriate and balanced.\n"
        "- 2 = Slightly decorative but within cultural norms.\n- 3 = Several features feel idealized or overly "
        "emphasized.\n- 4 = Many elements feel exaggerated and unrealistic.\n- 5 = Strongly stereotypical, "
        "misleading, or culturally irrelevant.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
FAITH_JUDGE_PROMPT = JudgePrompt(
    template={"per_question": {"faith": JUDGE_ALIGN, "hal": JUDGE_HAL, "exag": JUDGE_EXAG}},
    parser="score_is",
    questions=("faith", "hal", "exag"),
)


# Sec. 4.2 "Study Design": "11 countries ... We selected 1-2 activities per category, ensuring
# coverage of all activity groups per country. We assessed three public T2I models and real
# images (for 3 countries), totaling 398 forms and 796 annotations (two annotators per form)";
# "Quality Control": "We recruit annotators matching each country's nationality (verified by
# Prolific) ... attention checks (e.g., selecting a pre-mentioned number), repeated questions to
# test consistency, and required free-text rationales describing the errors in the image";
# App. A.4: "Each image is annotated by two independent raters who are originally from the
# corresponding country". No allocation rule, no check rates, no minimum rationale length.
FAITH_STUDY_DESIGN = StudyDesign(
    source="CULTIVate (cultivate-ahead.txt), Sec. 4.2 Study Design and Quality Control, App. A.4",
    k=2,
    sample_strata=("country", "category", "generator"),
    sample_size=398,
    eligibility=({"attribute": "nationality", "item_key": "country"},),
    qc={"rationale_question": "rationale"},
    notes=(
        "The paper also used attention checks (selecting a pre-mentioned number) and repeated "
        "questions to test consistency, without giving their rates: import attention items and "
        "set the rates yourself.",
        "1-2 activities per category and country; real images for 3 countries besides the three T2I models.",
    ),
)


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
    """Frame items by the value of an item column (strata: region, generator, country)."""
    if not len(inp.frame) or column not in inp.frame.columns:
        return {}
    items = inp.frame.drop_duplicates("item").set_index("item")[column]
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
    H = inp.wide(FAITH_FIELD, humans)
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
        "95% bootstrap CIs over images. Paper: α 0.15-0.62.",
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


FAITHFULNESS = Preset(
    key="cultivate.faithfulness",
    name="CULTIVate cultural faithfulness (GT-FAITH / EXAG / HAL / REALISM)",
    protocol=FAITH_PROTOCOL,
    item_fields=FAITH_ITEM_FIELDS,
    rubric=FAITH_RUBRIC,
    demo_items=faithfulness_demo_items,
    defaults={"k": 2},
    study_design=FAITH_STUDY_DESIGN,
    judge_prompt=FAITH_JUDGE_PROMPT,
    # AHEaD (Sec. 3.2, judges/backends/ahead.py): FAITH, HAL and EXAG as the 1-5 answers they
    # stand in for, ALIGN and ALIGN+HAL as metrics beside them (Tables 2-3)
    direct_judges={"ahead": DirectJudge(questions=("faith", "hal", "exag"), mode="cultivate")},
    validation_report=faithfulness_validation_report,
)

# --------------------------------------------------------------------------- descriptors
DESC_PROTOCOL = (
    "CULTIVate / AHEaD (cultivate-ahead.txt), Sec. 4.2 and App. A.5 (Table 11): human validation of "
    "the LLM-generated reference descriptors of an activity in a country. Annotators mark each "
    "descriptor as correct or incorrect (precision; 90% in the paper), rate overall descriptor "
    "coverage on a 5-point Likert scale (average 4.5/5) and list missing descriptors in free text "
    "(26 of 378 annotators reported omissions). The coverage anchors are our default (the paper "
    "reports a 5-point Likert rating of overall descriptor quality without anchors)."
)

DESC_INSTRUCTIONS = """\
We also evaluate reference descriptor quality through human evaluation. We measure precision by having annotators mark each descriptor as correct or incorrect. It is infeasible to compute recall because no ground-truth descriptor set exists. Instead, we estimate recall through two measures: (1) annotators rated overall descriptor quality on a 5-point Likert scale, and (2) annotators identified missing descriptors in free-text responses.

For each descriptor of the activity: mark it correct (1) if it is something an image of this activity in this country could correctly show, incorrect (0) otherwise. Then rate how well the whole list covers the activity, and list any missing descriptors."""

DESC_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "required": False, "label": "Example image"},
    {"name": "activity", "type": "text", "label": "Activity"},
    {"name": "descriptors", "type": "list", "of": "text", "label": "Reference descriptors"},
]

DESC_RUBRIC: dict[str, Any] = {
    "title": "CULTIVate reference descriptor validation",
    "instructions": DESC_INSTRUCTIONS,
    "questions": [
        {
            "id": "descriptor_correct",
            "type": "binary",
            "label": "Descriptor correct?",
            "prompt": "Is this descriptor of {activity} in {country} correct?",
            "options": [{"value": 0, "label": "Incorrect"}, {"value": 1, "label": "Correct"}],
            # descriptors is a list of text: the renderer shows the element itself
            "repeat": {"over": "descriptors", "label": "Descriptor {n}"},
        },
        {
            "id": "coverage",
            "type": "scale",
            "label": "Coverage",
            "prompt": "Overall, how well do these descriptors cover {activity} in {country}?",
            "options": [
                {"value": 1, "label": "Very poor: most important elements are missing"},
                {"value": 2, "label": "Poor: many important elements are missing"},
                {"value": 3, "label": "Fair: some important elements are missing"},
                {"value": 4, "label": "Good: only minor elements are missing"},
                {"value": 5, "label": "Excellent: nothing important is missing"},
            ],
        },
        {
            "id": "missing",
            "type": "text",
            "label": "Missing descriptors",
            "prompt": "List any missing descriptors (optional).",
            "required": False,
        },
    ],
    "derived": [
        {"id": "precision", "label": "Descriptor precision", "expr": "mean(descriptor_correct)"},
        {"id": "reported_missing", "label": "Reported a missing descriptor", "expr": "1 if missing else 0"},
    ],
}

_DESC_DEMO = [
    (
        "Iran",
        GS,
        "eating",
        "eating at home",
        [
            "family sitting on the floor around a sofreh",
            "bowls of rice with saffron",
            "plates of fresh herbs",
            "Persian rug underneath the meal",
            "glasses of black tea",
            "people eating with chopsticks",
        ],
    ),
    (
        "India",
        GS,
        "celebration",
        "celebrating Diwali",
        [
            "rows of small oil lamps (diyas)",
            "colourful rangoli patterns on the floor",
            "fireworks in the night sky",
            "people in traditional saris and kurtas",
            "trays of sweets",
            "carved pumpkins on the doorstep",
        ],
    ),
    (
        "Nigeria",
        GS,
        "wedding",
        "a traditional wedding",
        [
            "couple in matching aso-ebi fabric",
            "women wearing gele head ties",
            "guests spraying money on the couple",
            "drummers playing talking drums",
            "white wedding cake with many tiers",
        ],
    ),
    (
        "Nepal",
        GS,
        "greeting",
        "greeting an elder",
        [
            "palms pressed together in namaste",
            "slight bow of the head",
            "touching the elder's feet",
            "tika on the forehead",
            "firm handshake with eye contact",
        ],
    ),
    (
        "Brazil",
        GS,
        "dance",
        "dancing samba",
        [
            "dancers in feathered carnival costumes",
            "street parade with drummers",
            "fast footwork",
            "sambadrome stands with crowds",
            "dancers wearing kimonos",
        ],
    ),
    (
        "Germany",
        GN,
        "concert",
        "attending an outdoor concert",
        [
            "crowd in front of an open-air stage",
            "people holding beer cups",
            "summer festival setting",
            "stage lighting rigs",
            "rain ponchos",
        ],
    ),
    (
        "France",
        GN,
        "eating",
        "eating at a restaurant",
        [
            "bistro tables on a terrace",
            "baguette in a bread basket",
            "glass of red wine",
            "waiter in a black apron",
            "cheese course",
            "sushi conveyor belt",
        ],
    ),
    (
        "Spain",
        GN,
        "celebration",
        "celebrating La Tomatina",
        [
            "crowds throwing tomatoes in a street",
            "people in white t-shirts covered in red pulp",
            "trucks loaded with tomatoes",
            "goggles and swimwear",
            "bulls running through the street",
        ],
    ),
]


def descriptors_demo_items(folder: Path) -> list[dict[str, Any]]:
    items = []
    for i, (country, region, category, activity, descs) in enumerate(_DESC_DEMO, start=1):
        item: dict[str, Any] = {
            "id": f"cultivate-desc-{i:02d}",
            "activity": activity,
            "descriptors": descs,
            "country": country,
            "region": region,
            "category": category,
        }
        if i % 3 != 0:  # the image is optional
            item["image"] = draw_image(folder, f"cultivate_desc_{i:02d}.png", activity, subtitle=country)
        items.append(item)
    return items


# Sec. 4.2 "Annotations" and App. A.5 (Table 11): descriptors of 7 countries were marked correct /
# incorrect by annotators of the Sec. 4.2 human study, recruited "matching each country's
# nationality (verified by Prolific)" (Sec. 4.2 "Quality Control"). The paper gives no number of
# annotators per descriptor list, no sample design and no QC specific to this form.
DESC_STUDY_DESIGN = StudyDesign(
    source="CULTIVate (cultivate-ahead.txt), Sec. 4.2 Annotations and Quality Control, App. A.5",
    eligibility=({"attribute": "nationality", "item_key": "country"},),
    notes=("Table 11 covers 7 countries; the paper does not say how many annotators rated each list.",),
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
        )
    ]


DESCRIPTORS = Preset(
    key="cultivate.descriptors",
    name="CULTIVate reference descriptor validation",
    protocol=DESC_PROTOCOL,
    item_fields=DESC_ITEM_FIELDS,
    rubric=DESC_RUBRIC,
    demo_items=descriptors_demo_items,
    defaults={"k": 2},
    study_design=DESC_STUDY_DESIGN,
    validation_report=descriptors_validation_report,
)

PRESETS = [FAITHFULNESS, DESCRIPTORS]
