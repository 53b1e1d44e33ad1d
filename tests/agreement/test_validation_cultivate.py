"""CULTIVate's validation tables (issue 10): raw ratings stored through the platform (country-
matched raters from a pool, a judge rater, an imported metrics rater), every cell checked against
an independent computation (scipy / sklearn / the ``krippendorff`` package / numpy) to 1e-9.

The human reference and the group kappa are rater 1 vs rater 2 of each image, the slots being
the order in which the image's raters were assigned (recomputed here from the assignments)."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from scipy import stats as ss
from sklearn.metrics import cohen_kappa_score

from agreement import validation
from annotation import projects
from annotation.models import Assignment
from benchmarks import cultivate
from benchmarks.cultivate.tables import HUMAN_ROW
from judges import imported
from studies import plans, sampling
from tests.agreement import test_paper_tables as paper
from tests.agreement.test_paper_tables import import_ok, submit_humans, submit_judge, write_pngs
from tests.annotation.factories import make_project, make_user
from tests.studies.design_helpers import annotator

pytestmark = pytest.mark.django_db
env = paper._env
TOL = 1e-9
COUNTRIES = (
    ("India", "Global South"),
    ("Nigeria", "Global South"),
    ("Germany", "Global North"),
    ("Spain", "Global North"),
)
GENERATORS = ("FLUX", "Qwen-Image", "SD3.5")
PER_COUNTRY = 18
SCALES = ("faith", "exag", "hal", "realism")


def close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= TOL


@pytest.fixture
def cv(tmp_path):
    rng = np.random.default_rng(17)
    owner = make_user("cvt-owner", researcher=True)
    project = make_project(cultivate.FAITHFULNESS.key, owner=owner, k=2)
    project.options = {**project.options, "assignment": "plans"}
    project.save(update_fields=["options"])
    for c, _ in COUNTRIES:
        for g in (1, 2, 3):  # a pool of three per country: the two raters of an image vary
            projects.add_member(project=project, user=annotator(f"{c}-{g}", nationality=c), role="annotator")
    records, truth = [], {}
    for c, region in COUNTRIES:
        for i in range(PER_COUNTRY):
            e = f"cvt-{c}-{i:02d}"
            truth[e] = rng.normal()
            records.append(
                {
                    "id": e,
                    "image": f"{e}.png",
                    "activity": f"activity {i}",
                    "country": c,
                    "region": region,
                    "category": "eating",
                    "generator": GENERATORS[i % 3],
                }
            )
    write_pngs(tmp_path / "img", [r["image"] for r in records])
    import_ok(project, records, images=tmp_path / "img")
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=100, seed=1)
    plan = plans.create_plan(
        sample=sample, mode="preassigned", k=2, eligibility=[{"attribute": "nationality", "item_key": "country"}]
    )
    assert plan.report["unfilled_slots"] == 0
    raw: dict[tuple[str, str], dict[str, int]] = {}

    def likert(x):
        return int(np.clip(np.round(x), 1, 5))

    def answers(e, u, a):
        t = truth[e]
        ans = {
            "faith": likert(3 + t + rng.normal(scale=0.8)),
            "exag": likert(3 - 0.5 * t + rng.normal()),
            "hal": likert(2.5 - 0.7 * t + rng.normal()),
            "realism": likert(3.3 + rng.normal(scale=0.7)),
        }
        raw[(e, u)] = ans
        return {**ans, "rationale": "the attire is from another region"}

    submit_humans(project, answers)
    judge = {e: {"faith": likert(3 + t + rng.normal()), "hal": likert(3 - t), "exag": 2} for e, t in truth.items()}
    submit_judge(project, "mllm-judge", lambda e: {**judge[e], "realism": 4, "rationale": "judge output, no rationale"})
    metrics = {
        e: {"FAITH": float(0.5 + 0.1 * t + rng.normal(scale=0.05)), "clip": float(rng.random())}
        for e, t in truth.items()
    }
    report = imported.import_judge_outputs(
        project=project,
        data="\n".join(json.dumps({"id": e, **m}) for e, m in metrics.items()) + "\n",
        data_format="jsonl",
        name="ahead",
        metrics=["FAITH", "clip"],
    )
    assert report.ok, report.errors
    # the slots: the image's raters in assignment order
    slots: dict[str, list[str]] = {}
    for a in Assignment.objects.filter(project=project, rater__kind="human", purpose="regular").order_by("id"):
        slots.setdefault(a.item.external_id, []).append(a.rater.name)
    assert all(len(v) == 2 for v in slots.values())
    assert len({tuple(v) for v in slots.values()}) > 4  # the pairs vary
    return project, truth, raw, judge, metrics, slots


def test_cultivate_faithfulness_tables_every_cell(cv):
    project, truth, raw, judge, metrics, slots = cv
    items = sorted(truth)
    country = {e: e.split("-")[1] for e in items}
    region = {e: dict(COUNTRIES)[country[e]] for e in items}
    gen = {e: GENERATORS[int(e[-2:]) % 3] for e in items}
    gt = {f: {e: np.mean([raw[(e, u)][f] for u in slots[e]]) for e in items} for f in SCALES}
    s1 = {e: raw[(e, slots[e][0])]["faith"] for e in items}
    s2 = {e: raw[(e, slots[e][1])]["faith"] for e in items}
    series = {
        "imported: ahead: clip": {e: metrics[e]["clip"] for e in items},
        "imported: ahead: FAITH": {e: metrics[e]["FAITH"] for e in items},
        "mllm-judge: faith": {e: judge[e]["faith"] for e in items},
        "mllm-judge: exag": {e: judge[e]["exag"] for e in items},
        "mllm-judge: hal": {e: judge[e]["hal"] for e in items},
        "mllm-judge: realism": dict.fromkeys(items, 4),
    }
    constant = ("mllm-judge: exag", "mllm-judge: realism")  # undefined, with the reason
    tables = {t.key: t for t in validation.compute_tables(project, bootstrap=120, seed=4)}
    assert list(tables) == [
        "cultivate-table2",
        "cultivate-table6",
        "cultivate-agreement-by-country",
        "cultivate-agreement-by-region",
        "cultivate-table13",
        "judge-answers",  # one answer per judge, just before the per-field verdicts (issue 34)
        "judge-verdicts",
        # "Does the benchmark's conclusion hold?" per generator, with the preset's finding
        "conclusions-systems",
        "conclusions-pairs",
        "conclusions-agreement",
        "conclusions-findings",
    ]

    def rho(values, sel):
        return float(ss.spearmanr([values[e] for e in sel], [gt["faith"][e] for e in sel]).statistic)

    def human(sel):
        return float(ss.spearmanr([s1[e] for e in sel], [s2[e] for e in sel]).statistic)

    # --- Table 2: by region and All
    t2 = tables["cultivate-table2"]
    assert t2.columns == ("Global South", "Global North", "All", "n images (All)")
    assert [r.label for r in t2.rows] == [*series, HUMAN_ROW]
    subsets = {"Global South": [e for e in items if region[e] == "Global South"]}
    subsets["Global North"] = [e for e in items if region[e] == "Global North"]
    subsets["All"] = items
    for col, sel in subsets.items():
        for label, values in series.items():
            if label in constant:
                c = t2.cell(label, col)
                assert c.value is None and "constant" in c.note
                continue
            c = t2.cell(label, col)
            assert close(c.value, rho(values, sel)), (label, col)
            assert c.n == len(sel) and c.ci is not None and c.ci[0] <= c.ci[1]
        h = t2.cell(HUMAN_ROW, col)
        assert close(h.value, human(sel)) and h.n == len(sel) and h.ci is not None
    assert t2.cell(HUMAN_ROW, "n images (All)").value == len(items)

    # --- Table 6: by T2I model, Avg. = mean over the models
    t6 = tables["cultivate-table6"]
    assert t6.columns == (*GENERATORS, "Avg.")
    for label, values in [*series.items(), (HUMAN_ROW, None)]:
        if label in constant:
            continue
        per = []
        for g in GENERATORS:
            sel = [e for e in items if gen[e] == g]
            want = human(sel) if values is None else rho(values, sel)
            assert close(t6.cell(label, g).value, want), (label, g)
            per.append(want)
        avg = t6.cell(label, "Avg.")
        assert close(avg.value, float(np.mean(per))) and avg.ci is not None

    # --- App. A.4: alpha (ordinal) and kappa rater 1 vs rater 2 per country
    agree = tables["cultivate-agreement-by-country"]
    assert [r.label for r in agree.rows] == ["India", "Nigeria", "Germany", "Spain"]
    alpha, kappa = {}, {}
    for c, reg in COUNTRIES:
        sel = [e for e in items if country[e] == c]
        pool = [f"{c}-{g}" for g in (1, 2, 3)]
        data = np.array([[raw.get((e, u), {}).get("faith", np.nan) for e in sel] for u in pool], dtype=float)
        alpha[c] = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        kappa[c] = cohen_kappa_score([s1[e] for e in sel], [s2[e] for e in sel])
        assert agree.cell(c, "Region").value == reg
        a = agree.cell(c, "Krippendorff's α (ordinal)")
        assert close(a.value, alpha[c]) and a.n == len(sel) and a.ci is not None
        k = agree.cell(c, "Cohen's κ, rater 1 vs rater 2")
        assert close(k.value, kappa[c]) and k.n == len(sel) and k.ci is not None
        assert agree.cell(c, "n images").value == len(sel)
        assert agree.cell(c, "n raters").value == len({u for e in sel for u in slots[e]})

    by_region = tables["cultivate-agreement-by-region"]
    assert [r.label for r in by_region.rows] == ["Global South", "Global North", "All"]
    for reg in ("Global South", "Global North", "All"):
        cs = [c for c, r in COUNTRIES if reg in (r, "All")]
        a = [alpha[c] for c in cs]
        sel = [e for e in items if country[e] in cs]
        row = by_region.cell
        assert close(row(reg, "Mean α over countries").value, float(np.mean(a)))
        assert close(row(reg, "SD of α over countries").value, float(np.std(a, ddof=1)))
        assert close(row(reg, "Min α").value, min(a)) and close(row(reg, "Max α").value, max(a))
        assert close(row(reg, "Mean κ over countries").value, float(np.mean([kappa[c] for c in cs])))
        pooled = row(reg, "Cohen's κ, rater 1 vs rater 2 (pooled)")
        assert close(pooled.value, cohen_kappa_score([s1[e] for e in sel], [s2[e] for e in sel]))
        assert pooled.ci is not None and row(reg, "Mean α over countries").ci is not None
        assert row(reg, "n countries").value == len(cs)

    # --- Table 13: mean (SD) of each scale per country and region, over the images' scores
    t13 = tables["cultivate-table13"]
    assert [r.label for r in t13.rows] == ["India", "Nigeria", "Germany", "Spain", "Global South", "Global North"]
    for label in [r.label for r in t13.rows]:
        sel = [e for e in items if label in (country[e], region[e])]
        for name, f in (("GT-FAITH", "faith"), ("GT-EXAG", "exag"), ("GT-HAL", "hal"), ("GT-REALISM", "realism")):
            v = np.array([gt[f][e] for e in sel])
            m = t13.cell(label, f"{name} mean")
            assert close(m.value, float(v.mean())) and m.ci is not None and m.n == len(sel)
            assert close(t13.cell(label, f"{name} SD").value, float(np.std(v, ddof=1)))
        assert t13.cell(label, "n images").value == len(sel)


def test_cultivate_descriptor_table11_every_cell(tmp_path):
    rng = np.random.default_rng(2)
    owner = make_user("cvd-owner", researcher=True)
    team = [make_user(f"cvd-ann{i}") for i in range(2)]
    project = make_project(cultivate.DESCRIPTORS.key, owner=owner, annotators=team, k=2)
    countries = ("Brazil", "China", "Iran")
    records = []
    for c in countries:
        for i in range(6):
            n = 4 + (i % 3)
            records.append(
                {
                    "id": f"cvd-{c}-{i}",
                    "activity": f"activity {i}",
                    "descriptors": [f"descriptor {d}" for d in range(n)],
                    "country": c,
                    "region": "Global South",
                }
            )
    import_ok(project, records)
    raw: dict[tuple[str, str], dict] = {}

    def answers(e, u, a):
        n = 4 + (int(e.rsplit("-", 1)[1]) % 3)
        p = {"Brazil": 0.9, "China": 0.8, "Iran": 0.7}[e.split("-")[1]]
        ans = {
            "descriptor_correct": [int(rng.random() < p) for _ in range(n)],
            "coverage": int(rng.integers(3, 6)),
            "missing": "a tea ceremony" if rng.random() < 0.25 else "",
        }
        raw[(e, u)] = ans
        return ans

    submit_humans(project, answers)
    (t,) = validation.compute_tables(project, bootstrap=100, seed=0)
    assert t.key == "cultivate-table11"
    assert [r.label for r in t.rows] == [*countries, "Average over countries", "All judgements"]
    prec = {}
    for label in [*countries, "All judgements"]:
        forms = [a for (e, _), a in raw.items() if label == "All judgements" or e.split("-")[1] == label]
        judged = np.array([x for a in forms for x in a["descriptor_correct"]], float)
        cov = np.array([a["coverage"] for a in forms], float)
        miss = np.array([bool(a["missing"]) for a in forms], float)
        prec[label] = judged.mean()
        c = t.cell(label, "Precision (marked correct)")
        assert close(c.value, judged.mean()) and c.n == len(judged) and c.ci is not None
        assert close(t.cell(label, "Mean coverage (1-5)").value, cov.mean())
        assert close(t.cell(label, "Share reporting a missing descriptor").value, miss.mean())
        assert t.cell(label, "Forms reporting a missing descriptor").value == int(miss.sum())
        assert t.cell(label, "n descriptor judgements").value == len(judged)
        assert t.cell(label, "n forms").value == len(forms)
    avg = t.cell("Average over countries", "Precision (marked correct)")
    assert close(avg.value, float(np.mean([prec[c] for c in countries]))) and avg.ci is not None
