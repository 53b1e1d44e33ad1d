"""Issue 22, finding 1: every humans-only cell of every preset's validation tables is computed
from human ratings alone. Each test builds a project through the platform (import, human
submissions, a judge stored as a model rater), computes the tables, then lets the judge rate
extra items no person rated (imported and submitted the way a judge run stores them) and checks
that no humans-only cell moves (value, interval, n, note), and that the humans-only cells equal
an independent recomputation (pandas / numpy / scipy / krippendorff) on the raw answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest

from agreement import validation
from annotate import annotating
from annotation.models import Assignment, Item, Rater
from benchmarks import blendvis, counterfactuals
from tests.agreement import test_paper_tables as paper
from tests.agreement.latex import compile_latex
from tests.agreement.test_paper_tables import (
    CC_DIMS,
    CC_FLAGS,
    VG_ANNOTATORS,
    VG_FIELDS,
    eq8,
    import_ok,
    submit_humans,
    submit_judge,
    table4_independent,
    write_pngs,
)
from tests.annotation.factories import make_project, make_user

pytestmark = pytest.mark.django_db
TOL = 1e-9

env = paper._env
valueground = paper.valueground
cultivate = paper.cultivate


def close(a: Any, b: Any) -> bool:
    return a is not None and b is not None and abs(float(a) - float(b)) <= TOL


def judge_rates_extra_items(
    project, judge: Rater, records: list[dict], answers_for: Callable[[str], dict], images: Path | None = None
) -> None:
    """Import ``records`` as new items and let ``judge`` (a model rater) rate them, nobody else."""
    import_ok(project, records, images=images)
    for item in Item.objects.filter(project=project, external_id__in=[r["id"] for r in records]).order_by("id"):
        a = Assignment.objects.create(project=project, item=item, rater=judge, presentation={})
        annotating.submit_annotation(assignment_id=a.id, rater=judge, answers=answers_for(item.external_id))


def cells(tables, keep: Callable[[str, str, str], bool]) -> dict[tuple[str, str, str], dict]:
    """The cells ``keep(table key, row label, column)`` selects, by (table, row, column)."""
    return {
        (t.key, r.label, col): c.to_dict()
        for t in tables
        for r in t.rows
        for col, c in zip(t.columns, r.cells, strict=True)
        if keep(t.key, r.label, col)
    }


def assert_unmoved(before: dict, after: dict) -> None:
    assert before, "no humans-only cell selected"
    moved = {k: (before[k], after.get(k)) for k in before if after.get(k) != before[k]}
    assert not moved, moved


# ------------------------------------------------------------------------------ BLEnD-Vis
def _blendvis(tmp_path, preset_key: str, n: int, extra: int):
    rng = np.random.default_rng(8)
    owner = make_user(f"{preset_key}-owner", researcher=True)
    team = [make_user(f"{preset_key}-ann{i}") for i in range(3)]
    project = make_project(preset_key, owner=owner, annotators=team, k=3)
    image = preset_key == blendvis.IMAGE.key

    def record(i: int) -> dict:
        e = f"bv-{i:03d}"
        if image:
            return {"id": e, "image": f"{e}.png", "entity": f"dish {i}", "region": "Spain", "placeholder": "this food"}
        return {"id": e, "original_template": f"What is {i}?", "rephrased_template": f"Which is {i}?"}

    folder = tmp_path / "img"
    if image:
        write_pngs(folder, [f"bv-{i:03d}.png" for i in range(n + extra)])
    import_ok(project, [record(i) for i in range(n)], images=folder if image else None)
    good, bad = ("G", "B") if image else ("Good", "Bad")
    raw: dict[tuple[str, str], int] = {}

    def answers(e, u, a):
        # some annotators skip: ties and items without a majority (fewer than two votes)
        is_bad = rng.random() < (0.6 if int(e[-3:]) % 5 == 0 else 0.15)
        raw[(e, u)] = 0 if is_bad else 1
        if is_bad:
            return (
                {"verdict": bad, "reason_category": "misleading", "reason": "wrong dish"} if image else {"verdict": bad}
            )
        return {"verdict": good}

    submit_humans(project, answers)
    judge = submit_judge(project, "vlm-judge", lambda e: {"verdict": good})
    return project, judge, raw, record, (good, bad), folder


@pytest.mark.parametrize("preset_key", [blendvis.IMAGE.key, blendvis.TEMPLATE.key])
def test_blendvis_majority_counts_only_items_a_person_voted_on(tmp_path, preset_key):
    project, judge, raw, record, (good, _bad), folder = _blendvis(tmp_path, preset_key, 40, 25)
    # remove one vote from some items: a 1-1 tie or a single vote has no majority
    votes = pd.Series(raw).rename_axis(["item", "rater"]).unstack()
    before = validation.compute_tables(project, bootstrap=200, seed=1)
    extra = [record(i) for i in range(40, 65)]
    judge_rates_extra_items(
        project,
        judge,
        extra,
        lambda e: {"verdict": good},
        images=folder if preset_key == blendvis.IMAGE.key else None,
    )
    after = validation.compute_tables(project, bootstrap=200, seed=1)
    compile_latex(after)  # every table of the preset, the verdicts table included
    humans_only = lambda key, row, col: key.startswith("blendvis-")  # noqa: E731 - every cell
    assert_unmoved(cells(before, humans_only), cells(after, humans_only))

    # independently: 2-of-3 majority of the human votes, items without a human vote not counted
    n_bad = (votes == 0).sum(axis=1)
    n_good = (votes == 1).sum(axis=1)
    maj_bad = int(((n_bad >= 2) & (n_bad > n_good)).sum())
    maj_good = int(((n_good >= 2) & (n_good > n_bad)).sum())
    t = after[0]
    row = "Majority of the annotators"
    unit = "Images" if preset_key == blendvis.IMAGE.key else "Templates"
    assert t.cell(row, "Bad").value == maj_bad and t.cell(row, "Good").value == maj_good
    assert t.cell(row, f"{unit} with a majority").value == maj_bad + maj_good
    assert t.cell(row, f"{unit} without (tie)").value == len(votes) - maj_bad - maj_good == 0
    assert close(t.cell(row, "Bad rate").value, maj_bad / (maj_bad + maj_good))


# ------------------------------------------------------------------------------ ValueGround
def test_valueground_human_agreement_and_n_ignore_items_only_the_judge_rated(valueground, tmp_path):
    project, ids, humans, judges, pos = valueground
    jraw = judges["judge-a"]
    judge = submit_judge(project, "judge-a", lambda e: {f: int(jraw[f][pos[e]]) for f in VG_FIELDS})
    before = validation.compute_tables(project, bootstrap=200, seed=2)
    extra_ids = [f"vg-x{i:02d}" for i in range(12)]
    write_pngs(tmp_path / "x", [f"{e}-{s}.png" for e in extra_ids for s in "ab"])
    records = [
        {
            "id": e,
            "question": "How important is work?",
            "option_a": "Very",
            "option_b": "Not at all",
            "image_a": f"{e}-a.png",
            "image_b": f"{e}-b.png",
            "question_id": "Q9",
            # a third backbone that only the judge's items carry: no split may appear
            "generator": "flux",
        }
        for e in extra_ids
    ]
    judge_rates_extra_items(project, judge, records, lambda e: {"q1": 2, "q2": 0, "q3": 1, "q4": 1}, tmp_path / "x")
    after = validation.compute_tables(project, bootstrap=200, seed=2)
    compile_latex(after)  # every table of the preset, the verdicts table included
    assert [t.key for t in after] == [t.key for t in before]

    def humans_only(key: str, row: str, col: str) -> bool:
        return key.startswith("valueground-") and (col.startswith("Human agreement") or col == "n")

    assert_unmoved(cells(before, humans_only), cells(after, humans_only))
    t4 = after[0]
    want = table4_independent(humans, {**jraw, "total": eq8(*(jraw[q] for q in VG_FIELDS))})
    for label, f in (("Q1", "q1"), ("Q2", "q2"), ("Q3", "q3"), ("Q4", "q4"), ("Total", "total")):
        assert close(t4.cell(label, "Human agreement: Pearson r").value, want[f]["human_pearson"])
        assert close(t4.cell(label, "Human agreement: Spearman ρ").value, want[f]["human_spearman"])
        assert t4.cell(label, "n").value == len(ids)  # the human-rated items, not the judge's 48
        # the judge vs the mean human stands on the items both rated
        assert close(t4.cell(label, "judge-a vs mean human: Pearson r").value, want[f]["judge_pearson"])
        assert t4.cell(label, "judge-a vs mean human: Pearson r").n == len(ids)
    assert len(VG_ANNOTATORS) == 4


# ------------------------------------------------------------------------------ CULTIVate
def test_cultivate_human_tables_ignore_images_only_the_judge_rated(cultivate, tmp_path):
    project, raw, _judge_raw = cultivate
    before = validation.compute_tables(project, bootstrap=200, seed=3)
    judge = Rater.objects.get(kind=Rater.Kind.MODEL, name="mllm-judge")
    extra = [
        {
            "id": f"cv-extra-{i}",
            "image": f"cv-extra-{i}.png",
            "activity": f"activity {i}",
            # a country and a region no person rated: no row or column may appear
            "country": "Peru" if i % 2 else "India",
            "region": "Latin America" if i % 2 else "Global South",
            "category": "eating",
            "generator": "SDXL",
            "prompt": "A photo.",
        }
        for i in range(8)
    ]
    write_pngs(tmp_path / "x", [r["image"] for r in extra])
    judge_rates_extra_items(
        project,
        judge,
        extra,
        lambda e: {"faith": 4, "exag": 2, "hal": 2, "realism": 4, "rationale": "judge output, no rationale"},
        tmp_path / "x",
    )
    after = validation.compute_tables(project, bootstrap=200, seed=3)
    # every table of the preset, the verdicts table and "Does the benchmark's conclusion hold?" included
    assert {"conclusions-systems", "conclusions-pairs", "conclusions-agreement"} <= {t.key for t in after}
    compile_latex(after)

    def humans_only(key: str, row: str, col: str) -> bool:
        return key in ("cultivate-agreement-by-country", "cultivate-agreement-by-region", "cultivate-table13") or (
            row.startswith("Human")
        )

    assert_unmoved(cells(before, humans_only), cells(after, humans_only))
    # the per-system conclusions gain the generator only the judge rated (PPI++'s judge-only
    # items); every other table keeps its rows
    after_, before_ = ([t for t in ts if not t.key.startswith("conclusions-")] for ts in (after, before))
    assert [t.columns for t in after_] == [t.columns for t in before_]
    assert [[r.label for r in t.rows] for t in after_] == [[r.label for r in t.rows] for t in before_]

    # independently: Krippendorff's alpha (ordinal) per country on the human GT-FAITH ratings
    df = pd.DataFrame([(e, u, v) for (e, u), v in raw.items()], columns=["item", "rater", "value"])
    df["country"] = df["item"].str.split("-").str[1]
    by_country = next(t for t in after if t.key == "cultivate-agreement-by-country")
    for c, sub in df.groupby("country"):
        M = sub.pivot(index="rater", columns="item", values="value").to_numpy(dtype=float)
        want = krippendorff.alpha(reliability_data=M, level_of_measurement="ordinal")
        assert close(by_country.cell(c, "Krippendorff's α (ordinal)").value, want), c
        assert by_country.cell(c, "n images").value == sub["item"].nunique()
    t13 = next(t for t in after if t.key == "cultivate-table13")
    gt = df.groupby("item")["value"].mean()
    assert close(t13.cell("India", "GT-FAITH mean").value, gt[gt.index.str.contains("-India-")].mean())
    assert t13.cell("India", "n images").value == int(gt.index.str.contains("-India-").sum())


# ------------------------------------------------------------------------------ CQ-Bench (stories)
def test_cqbench_annotator_kappa_ignores_units_only_the_judge_rated():
    project, ids, raw, _judge_raw = paper.cqbench_story_project("cqh")
    before = validation.compute_tables(project, bootstrap=200, seed=4)
    judge = Rater.objects.get(kind=Rater.Kind.MODEL, name="gpt-judge")
    extra = [
        {
            "id": f"cq-x{i}",
            "story": "A: hi\nB: hello",
            "category": "social values",
            "values": [{"statement": f"value {v}", "attitude": "agree"} for v in range(5)],
            "rewrites": [{"before": "x", "after": "y"}, {"before": "p", "after": "q"}],
        }
        for i in range(6)
    ]
    judge_rates_extra_items(
        project,
        judge,
        extra,
        lambda e: {"consistency": [1] * 5, "reflection": [0] * 5, "rewrite_improvement": [5, 5], "naturalness": 5},
    )
    after = validation.compute_tables(project, bootstrap=200, seed=4)
    compile_latex(after)  # every table of the preset, the verdicts table included

    def humans_only(key: str, row: str, col: str) -> bool:
        if key == "cqbench-story-values":
            return col.startswith("Cohen's κ") or col.startswith("n ")
        return key == "cqbench-story-quality"

    assert_unmoved(cells(before, humans_only), cells(after, humans_only))
    # independently: Cohen's kappa of the two annotators over the (story, value) units
    t = after[0]
    a1, a2 = "cqh-ann1", "cqh-ann2"
    for label, q in (("Reflection", "reflection"), ("Consistency", "consistency")):
        x = np.concatenate([raw[(e, a1)][q] for e in ids])
        y = np.concatenate([raw[(e, a2)][q] for e in ids])
        assert close(t.cell(label, "Cohen's κ between annotators").value, paper.cohen_kappa(x, y))
        assert t.cell(label, "n (story, value) units").value == 5 * len(ids)
    nat = np.array([raw[k]["naturalness"] for k in raw], dtype=float)
    q = after[1]
    assert close(q.cell("Naturalness (1-5)", "Mean").value, nat.mean())
    assert q.cell("Naturalness (1-5)", "n judgements").value == len(nat)


# ------------------------------------------------------------------------------ Cultural Counterfactuals
def test_counterfactuals_flag_rates_ignore_images_only_the_judge_rated(tmp_path):
    rng = np.random.default_rng(5)
    owner = make_user("cch-owner", researcher=True)
    project = make_project(counterfactuals.AUDIT.key, owner=owner, annotators=[make_user("cch-ann")], k=1)

    def record(d: str, i: int) -> dict:
        e = f"cc-{d}-{i}"
        return {
            "id": e,
            "context_image": f"{e}-ctx.png",
            "person_image": f"{e}-p.png",
            "counterfactual_image": f"{e}-cf.png",
            "context_label": f"{d} label",
            "age_group": "Young",
            "race": "Black",
            "gender": "Woman",
            "dimension": d,
        }

    records = [record(d, i) for d in CC_DIMS for i in range(10)]
    extra = [record(d, i) for d in CC_DIMS for i in range(10, 14)] + [record("newdim", 0)]
    write_pngs(
        tmp_path / "i",
        [r[k] for r in records + extra for k in ("context_image", "person_image", "counterfactual_image")],
    )
    import_ok(project, records, images=tmp_path / "i")
    raw: dict[str, list[str]] = {}

    def answers(e, u, a):
        raw[e] = [f for f, p in zip(CC_FLAGS, (0.3, 0.15, 0.1, 0.05, 0.0, 0.0), strict=True) if rng.random() < p]
        return {"flags": raw[e]}

    submit_humans(project, answers)
    judge = submit_judge(project, "clf", lambda e: {"flags": ["context_source"]})
    before = validation.compute_tables(project, bootstrap=200, seed=5)
    judge_rates_extra_items(project, judge, extra, lambda e: {"flags": list(CC_FLAGS)}, tmp_path / "i")
    after = validation.compute_tables(project, bootstrap=200, seed=5)
    compile_latex(after)  # every table of the preset, the verdicts table included

    def humans_only(key: str, row: str, col: str) -> bool:
        return key == "counterfactuals-flags"

    assert_unmoved(cells(before, humans_only), cells(after, humans_only))
    flags = after[0]
    assert flags.columns == ("All dimensions", *sorted(CC_DIMS))
    label = counterfactuals.FLAGS[0][1]
    want = np.mean(["context_source" in v for v in raw.values()])
    assert close(flags.cell(label, "All dimensions").value, want)
    assert flags.cell("n judgements", "All dimensions").value == len(raw)
