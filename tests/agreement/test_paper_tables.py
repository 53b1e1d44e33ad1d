"""Each paper's reported table, reproduced end to end from a small synthetic raw dataset.

For every protocol in ``/work/shared/PROTOCOLS.md`` the test builds the raw ratings itself
(a seeded random dataset), puts them through the platform exactly as a study would (project
from the preset, annotators, item import, assignments, ``submit_annotation`` for people and
for a model rater acting as judge), computes the paper's table with the platform
(:func:`agreement.selectors.ratings_frame` + :mod:`hvstats` /
:func:`agreement.services.compute_report`) and checks every number against an independent
computation on the raw values (numpy / scipy / the ``krippendorff`` package) to 1e-9.

- ValueGround Table 4: judge vs mean human (Pearson / Spearman) per field Q1-Q4 and Total
  (Eq. 8), human reference = leave-one-annotator-out; 4 annotators (2 China, 2 Germany), 36 pairs.
- CULTIVate: judge vs mean GT-FAITH Spearman per region (GS / GN / All), Krippendorff's alpha
  (ordinal) per country for the two raters of each image, Cohen's kappa between two rater groups.
- Cultural Counterfactuals: rate of each of the six failure flags, per dimension and overall.
- BLEnD-Vis: 2-of-3 majority Bad rate.
- CQ-Bench: Cohen's kappa (reflection / consistency) between two annotators, agreement with
  the model restricted to model-positive values, Turing accuracy (tie = 0), accuracy over
  non-ties, tie rate and exact binomial p-value.
"""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats as ss

from agreement import selectors, services
from agreement.services import ReportParams
from annotate import annotating
from annotation import importing, projects
from annotation.models import Annotation, Assignment, Item, Rater
from hvstats import (
    agreement_report,
    flag_rates,
    majority_vote,
    restricted_agreement,
    turing_accuracy,
)
from judges.combine import combine
from judges.ratings import judge_derived
from studies import plans, sampling
from tests.annotation.factories import jsonl, make_project, make_user, png_bytes
from tests.studies.design_helpers import annotator

pytestmark = pytest.mark.django_db
TOL = 1e-9


@pytest.fixture(autouse=True)
def _env(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEDIA_ROOT = str(tmp_path / "media")


# ------------------------------------------------------------------------------ helpers
def import_ok(project, records, images: Path | None = None) -> None:
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=images)
    assert report.ok, report.errors


def write_pngs(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k, n in enumerate(names):
        (folder / n).write_bytes(png_bytes((k * 7 % 256, 90, 140)))


def human_assignments(project):
    return (
        Assignment.objects.filter(project=project, rater__kind="human", purpose=Assignment.Purpose.REGULAR)
        .select_related("rater", "item")
        .order_by("id")
    )


def submit_humans(project, answers_for) -> None:
    """Every human assignment answered with ``answers_for(external_id, username, assignment)``."""
    for a in human_assignments(project):
        annotating.submit_annotation(
            assignment_id=a.id, rater=a.rater, answers=answers_for(a.item.external_id, a.rater.name, a)
        )


def submit_judge(project, name: str, answers_for) -> Rater:
    """A model rater's annotations: one regular assignment per item, submitted with the services."""
    judge = Rater.objects.create(kind=Rater.Kind.MODEL, name=name, backend="openai_chat", model_id=name)
    for item in Item.objects.filter(project=project).order_by("id"):
        a = Assignment.objects.create(project=project, item=item, rater=judge, presentation={})
        annotating.submit_annotation(assignment_id=a.id, rater=judge, answers=answers_for(item.external_id))
    return judge


def wide(frame: pd.DataFrame, field: str) -> pd.DataFrame:
    """external_id x rater table of one field from the platform's long frame; for a pooled
    repeat field (``q[*]``) the index is (external_id, element)."""
    sub = frame[frame["field"] == field]
    index = ["external_id", "element"] if field.endswith("[*]") else "external_id"
    return sub.pivot_table(index=index, columns="rater", values="value", aggfunc="first")


# independent implementations (numpy / scipy only)
def pearson(x, y) -> float:
    return float(np.corrcoef(np.asarray(x, float), np.asarray(y, float))[0, 1])


def spearman(x, y) -> float:
    return float(ss.spearmanr(np.asarray(x, float), np.asarray(y, float)).statistic)


def cohen_kappa(x, y) -> float:
    x, y = np.asarray(x), np.asarray(y)
    cats = np.unique(np.concatenate([x, y]))
    po = float(np.mean(x == y))
    pe = float(sum(np.mean(x == c) * np.mean(y == c) for c in cats))
    return (po - pe) / (1 - pe)


def close(a, b) -> bool:
    return a is not None and abs(a - b) <= TOL


# ------------------------------------------------------------------------------ ValueGround Table 4
VG_FIELDS = ("q1", "q2", "q3", "q4")
VG_ANNOTATORS = (("cn1", "China"), ("cn2", "China"), ("de1", "Germany"), ("de2", "Germany"))


def eq8(q1, q2, q3, q4):
    return (np.asarray(q1) / 2 + np.asarray(q2) / 2 + np.asarray(q3) / 2 + np.asarray(q4)) / 4


def valueground_raw(n: int = 36, seed: int = 11):
    """Latent pair quality -> 4 annotators' and two judges' Q1..Q4 (raw integer scores)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n)

    def scores(noise):
        out = {}
        for f, hi in (("q1", 2), ("q2", 2), ("q3", 2)):
            out[f] = np.clip(np.round(1.2 + 0.9 * quality + rng.normal(scale=noise, size=n)), 0, hi).astype(int)
        out["q4"] = (quality + rng.normal(scale=noise, size=n) > -0.6).astype(int)
        return out

    humans = {name: scores(0.7) for name, _ in VG_ANNOTATORS}
    judges = {"judge-a": scores(0.8), "judge-b": scores(0.9)}
    return [f"vg-{i:02d}" for i in range(n)], humans, judges


@pytest.fixture
def valueground(tmp_path):
    ids, humans, judges = valueground_raw()
    owner = make_user("vg-owner", researcher=True)
    team = [annotator(u, nationality=c) for u, c in VG_ANNOTATORS]
    project = make_project("valueground.pair_quality", owner=owner, annotators=team, k=4)
    folder = tmp_path / "vg-images"
    write_pngs(folder, [f"{e}-{s}.png" for e in ids for s in "ab"])
    stratum = ["gpt", "gemini"]
    import_ok(
        project,
        [
            {
                "id": e,
                "question": "How important is family in your life?",
                "option_a": "Very important",
                "option_b": "Not at all important",
                "image_a": f"{e}-a.png",
                "image_b": f"{e}-b.png",
                "question_id": f"Q{i // 2 + 1}",
                "generator": stratum[i % 2],
            }
            for i, e in enumerate(ids)
        ],
        images=folder,
    )
    pos = {e: i for i, e in enumerate(ids)}
    assert human_assignments(project).count() == 4 * len(ids)
    submit_humans(project, lambda e, u, a: {f: int(humans[u][f][pos[e]]) for f in VG_FIELDS})
    return project, ids, humans, judges, pos


def table4_platform(project, frame: pd.DataFrame, judge: str) -> dict[str, dict[str, float]]:
    """Table 4 from the platform: the report of each field (Q4 at the interval level, see below)."""
    rep = services.compute_report(project=project, params=ReportParams(bootstrap=0), frame=frame)
    out = {}
    for f in (*VG_FIELDS, "total"):
        if f == "q4":
            # Q4 is binary: the project report treats it as nominal (kappa, no correlations);
            # the paper's Pearson / Spearman of 0/1 scores come from the core at interval level.
            sub = frame[frame["field"] == "q4"].reset_index(drop=True)
            fr = agreement_report(sub, fields=["q4"], level="interval", bootstrap=0)["fields"]["q4"]
        else:
            fr = rep["fields"][f]
        jm = fr["judges_vs_humans"][judge]["vs_human_mean"]
        loo = fr["humans_vs_humans"]["leave_one_rater_out"]
        out[f] = {
            "judge_pearson": jm["pearson"]["value"],
            "judge_spearman": jm["spearman"]["value"],
            "human_pearson": loo["pearson"]["value"],
            "human_spearman": loo["spearman"]["value"],
            "n": jm["pearson"]["n_items"],
        }
    return out


def table4_independent(humans: dict, judge: dict) -> dict[str, dict[str, float]]:
    names = [u for u, _ in VG_ANNOTATORS]
    out = {}
    for f in (*VG_FIELDS, "total"):
        if f == "total":
            H = np.column_stack([eq8(*(humans[u][q] for q in VG_FIELDS)) for u in names])
            j = np.asarray(judge["total"], float)
        else:
            H = np.column_stack([humans[u][f] for u in names]).astype(float)
            j = np.asarray(judge[f], float)
        hm = H.mean(1)
        loo_p = [pearson(H[:, k], np.delete(H, k, 1).mean(1)) for k in range(4)]
        loo_s = [spearman(H[:, k], np.delete(H, k, 1).mean(1)) for k in range(4)]
        out[f] = {
            "judge_pearson": pearson(j, hm),
            "judge_spearman": spearman(j, hm),
            "human_pearson": float(np.mean(loo_p)),
            "human_spearman": float(np.mean(loo_s)),
            "n": len(j),
        }
    return out


def test_valueground_table4_single_judge_and_leave_one_annotator_out(valueground):
    project, ids, humans, judges, pos = valueground
    jraw = judges["judge-a"]
    submit_judge(project, "judge-a", lambda e: {f: int(jraw[f][pos[e]]) for f in VG_FIELDS})
    frame = selectors.ratings_frame(project)
    # the raw data went in unchanged: every stored score and the derived Total (Eq. 8)
    tot = wide(frame, "total")
    for u, _ in VG_ANNOTATORS:
        assert np.allclose(tot.loc[ids, u].astype(float), eq8(*(humans[u][q] for q in VG_FIELDS)), atol=TOL)
        for f in VG_FIELDS:
            assert (wide(frame, f).loc[ids, u].astype(int).to_numpy() == humans[u][f]).all()
    got = table4_platform(project, frame, "judge-a")
    want = table4_independent(humans, {**jraw, "total": eq8(*(jraw[q] for q in VG_FIELDS))})
    for f in want:
        assert got[f]["n"] == 36
        for k in ("judge_pearson", "judge_spearman", "human_pearson", "human_spearman"):
            assert close(got[f][k], want[f][k]), (f, k, got[f][k], want[f][k])
    # the judge's place among the humans is reported beside it (Total)
    rank = services.compute_report(project=project, params=ReportParams(field="total", bootstrap=0))["fields"]["total"][
        "judges_vs_humans"
    ]["judge-a"]["rank_among_humans"]["pearson"]
    assert close(rank["judge"], want["total"]["judge_pearson"])
    assert close(rank["human_mean"], want["total"]["human_pearson"])


def _store_ensemble(project, ids, pos, judges) -> Rater:
    """The ValueGround judge: two judges' scores averaged.  Stored the way
    ``judges.execution._finalise_item`` stores an ensemble (combine="mean"): the rubric answer is
    the option nearest the mean, the exact means go to ``derived["judge_exact"]``."""
    rubric = project.rubric_version.parsed()
    ens = Rater.objects.create(kind=Rater.Kind.MODEL, name="ensemble", backend="ensemble", model_id="a+b")
    for item in Item.objects.filter(project=project).order_by("id"):
        i = pos[item.external_id]
        member = [{f: int(judges[m][f][i]) for f in VG_FIELDS} for m in ("judge-a", "judge-b")]
        combined, exact = combine(rubric, list(VG_FIELDS), member, "mean")
        a = Assignment.objects.create(project=project, item=item, rater=ens, presentation={})
        ann = annotating.submit_annotation(assignment_id=a.id, rater=ens, answers=combined)
        ann.derived = judge_derived(rubric, ann.answers, exact)
        ann.save(update_fields=["derived"])
    return ens


def test_valueground_table4_two_judge_ensemble_mean(valueground):
    project, ids, humans, judges, pos = valueground
    _store_ensemble(project, ids, pos, judges)
    mean = {f: (judges["judge-a"][f] + judges["judge-b"][f]) / 2 for f in VG_FIELDS}
    assert any((v % 1 != 0).any() for v in mean.values())  # the members disagree somewhere
    mean["total"] = eq8(*(mean[q] for q in VG_FIELDS))
    want = table4_independent(humans, mean)
    got = table4_platform(project, selectors.ratings_frame(project), "ensemble")
    # the human reference does not involve the judge
    for f in want:
        assert close(got[f]["human_pearson"], want[f]["human_pearson"])
        assert close(got[f]["human_spearman"], want[f]["human_spearman"])
    bad = [
        (f, k, got[f][k], want[f][k])
        for f in want
        for k in ("judge_pearson", "judge_spearman")
        if not close(got[f][k], want[f][k])
    ]
    assert not bad, bad


def test_valueground_ensemble_stores_valid_options_and_keeps_the_exact_mean(valueground):
    """The stored answer of the ensemble is a valid rubric option (the mean rounded, ties up);
    the exact means and the Total of them are kept beside it for the statistics."""
    project, ids, _humans, judges, pos = valueground
    ens = _store_ensemble(project, ids, pos, judges)
    for ann in Annotation.objects.filter(rater=ens).select_related("item"):
        i = pos[ann.item.external_id]
        mean = {f: (judges["judge-a"][f][i] + judges["judge-b"][f][i]) / 2 for f in VG_FIELDS}
        assert ann.answers == {f: int(np.floor(mean[f] + 0.5)) for f in VG_FIELDS} | {"feedback": None}
        exact = ann.derived.get("judge_exact")
        if any(v % 1 for v in mean.values()):
            assert close(exact["derived"]["total"], eq8(*(mean[q] for q in VG_FIELDS)))


# ------------------------------------------------------------------------------ CULTIVate
CV_COUNTRIES = (
    ("India", "Global South"),
    ("Nigeria", "Global South"),
    ("Germany", "Global North"),
    ("Spain", "Global North"),
)
CV_PER_COUNTRY = 10


@pytest.fixture
def cultivate(tmp_path):
    rng = np.random.default_rng(5)
    owner = make_user("cv-owner", researcher=True)
    project = make_project("cultivate.faithfulness", owner=owner, k=2)
    project.options = {**project.options, "assignment": "plans"}
    project.save(update_fields=["options"])
    for c, _ in CV_COUNTRIES:
        for g in (1, 2):
            projects.add_member(project=project, user=annotator(f"{c}-{g}", nationality=c), role="annotator")
    records, truth = [], {}
    folder = tmp_path / "cv-images"
    for c, region in CV_COUNTRIES:
        for i in range(CV_PER_COUNTRY):
            e = f"cv-{c}-{i}"
            truth[e] = rng.normal()
            records.append(
                {
                    "id": e,
                    "image": f"{e}.png",
                    "activity": f"activity {i}",
                    "country": c,
                    "region": region,
                    "category": ["eating", "wedding"][i % 2],
                    "generator": ["FLUX", "Qwen-Image"][i % 2],
                    "prompt": f"A photorealistic photo of activity {i} in {c}.",
                }
            )
    write_pngs(folder, [r["image"] for r in records])
    import_ok(project, records, images=folder)
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=100, seed=1)
    plan = plans.create_plan(
        sample=sample, mode="preassigned", k=2, eligibility=[{"attribute": "nationality", "item_key": "country"}]
    )
    assert plan.report["unfilled_slots"] == 0
    raw: dict[tuple[str, str], int] = {}
    noise = {f"{c}-{g}": 0.5 + 0.3 * k for k, (c, _) in enumerate(CV_COUNTRIES) for g in (1, 2)}

    def answers(e, u, a):
        assert a.item.country == u.rsplit("-", 1)[0]  # raters of the image's country
        v = int(np.clip(np.round(3 + truth[e] + rng.normal(scale=noise[u])), 1, 5))
        raw[(e, u)] = v
        return {"faith": v, "exag": 3, "hal": 2, "realism": 4, "rationale": "minor issues with the attire"}

    submit_humans(project, answers)
    judge_raw = {e: int(np.clip(np.round(3 + truth[e] + rng.normal(scale=0.9)), 1, 5)) for e in truth}
    submit_judge(
        project,
        "mllm-judge",
        lambda e: {"faith": judge_raw[e], "exag": 2, "hal": 2, "realism": 4, "rationale": "judge output, no rationale"},
    )
    return project, raw, judge_raw


def test_cultivate_spearman_per_region_alpha_per_country_and_group_kappa(cultivate):
    project, raw, judge_raw = cultivate
    items = sorted(judge_raw)
    country = {e: e.split("-")[1] for e in items}
    region = {e: dict(CV_COUNTRIES)[country[e]] for e in items}
    raters_of = {e: sorted(u for (x, u) in raw if x == e) for e in items}
    assert all(len(r) == 2 for r in raters_of.values())
    hmean = {e: np.mean([raw[(e, u)] for u in raters_of[e]]) for e in items}

    # --- judge vs mean GT-FAITH Spearman: All and per region (GS / GN)
    rep = services.compute_report(project=project, params=ReportParams(field="faith", by="region", bootstrap=0))
    faith = rep["fields"]["faith"]
    assert faith["level"] == "ordinal"

    def want_rho(sel):
        return spearman([judge_raw[e] for e in sel], [hmean[e] for e in sel])

    assert close(faith["judges_vs_humans"]["mllm-judge"]["vs_human_mean"]["spearman"]["value"], want_rho(items))
    for reg in ("Global South", "Global North"):
        got = faith["strata"]["region"][reg]["judges_vs_humans"]["mllm-judge"]["vs_human_mean"]["spearman"]
        sel = [e for e in items if region[e] == reg]
        assert got["n_items"] == len(sel) == 2 * CV_PER_COUNTRY
        assert close(got["value"], want_rho(sel)), reg

    # --- Krippendorff's alpha (ordinal) per country, the two raters of each image
    by_country = services.compute_report(project=project, params=ReportParams(field="faith", by="country", bootstrap=0))
    alphas = {}
    for c, _ in CV_COUNTRIES:
        sel = [e for e in items if country[e] == c]
        data = np.array([[raw[(e, f"{c}-{g}")] for e in sel] for g in (1, 2)], dtype=float)  # raters x units
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        got = by_country["fields"]["faith"]["strata"]["country"][c]["humans_vs_humans"]["krippendorff_alpha"]
        assert got["n_items"] == CV_PER_COUNTRY and got["level"] == "ordinal"
        assert close(got["value"], ref), c
        alphas[c] = got["value"]
    gs = [alphas[c] for c, r in CV_COUNTRIES if r == "Global South"]
    ref_gs = [
        krippendorff.alpha(
            reliability_data=np.array(
                [[raw[(e, f"{c}-{g}")] for e in items if country[e] == c] for g in (1, 2)], float
            ),
            level_of_measurement="ordinal",
        )
        for c, r in CV_COUNTRIES
        if r == "Global South"
    ]
    assert close(float(np.mean(gs)), float(np.mean(ref_gs)))
    assert close(
        float(np.std(list(alphas.values()), ddof=1)),
        float(
            np.std(
                [
                    krippendorff.alpha(
                        reliability_data=np.array(
                            [[raw[(e, f"{c}-{g}")] for e in items if country[e] == c] for g in (1, 2)], float
                        ),
                        level_of_measurement="ordinal",
                    )
                    for c, _ in CV_COUNTRIES
                ],
                ddof=1,
            )
        ),
    )

    # --- Cohen's kappa between the two rater groups (rater 1 vs rater 2 of every country),
    # and the human-human Spearman ceiling between the groups
    frame = selectors.ratings_frame(project, include_models=False)
    fa = frame[frame["field"] == "faith"].copy()
    fa["rater"] = "group" + fa["rater"].str.rsplit("-", n=1).str[1]
    core = agreement_report(
        fa.reset_index(drop=True),
        fields=["faith"],
        level="ordinal",
        by=["country"],
        metrics=["cohen_kappa", "cohen_kappa_quadratic", "spearman"],
        bootstrap=0,
    )
    pw = core["fields"]["faith"]["humans_vs_humans"]["pairwise"]
    g1 = [raw[(e, f"{country[e]}-1")] for e in items]
    g2 = [raw[(e, f"{country[e]}-2")] for e in items]
    assert close(pw["cohen_kappa"]["matrix"][0][1], cohen_kappa(g1, g2))
    assert close(pw["spearman"]["matrix"][0][1], spearman(g1, g2))
    w = np.subtract.outer(np.arange(1, 6), np.arange(1, 6)) ** 2
    obs = np.zeros((5, 5))
    np.add.at(obs, (np.array(g1) - 1, np.array(g2) - 1), 1)
    exp = np.outer(obs.sum(1), obs.sum(0)) / obs.sum()
    assert close(pw["cohen_kappa_quadratic"]["matrix"][0][1], 1 - (w * obs).sum() / (w * exp).sum())
    per_country = []
    for c, _ in CV_COUNTRIES:
        sel = [k for k, e in enumerate(items) if country[e] == c]
        k_ref = cohen_kappa(np.take(g1, sel), np.take(g2, sel))
        got = core["fields"]["faith"]["strata"]["country"][c]["humans_vs_humans"]["pairwise"]["cohen_kappa"]
        assert close(got["matrix"][0][1], k_ref), c
        per_country.append(k_ref)
    assert np.isfinite(np.mean(per_country))


# ------------------------------------------------------------------------------ Cultural Counterfactuals
CC_FLAGS = (
    "context_source",
    "context_counterfactual",
    "orientation",
    "person_missing",
    "attributes",
    "context_missing",
)
CC_DIMS = ("religion", "nationality", "socioeconomic")


def test_counterfactuals_failure_flag_rates_per_dimension_and_overall(tmp_path):
    rng = np.random.default_rng(3)
    owner = make_user("cc-owner", researcher=True)
    team = [make_user(f"cc-ann{i}") for i in range(3)]
    project = make_project("counterfactuals.audit", owner=owner, annotators=team, k=1)
    folder = tmp_path / "cc-images"
    records = []
    for d in CC_DIMS:  # equal numbers per dimension
        for i in range(10):
            e = f"cc-{d}-{i}"
            records.append(
                {
                    "id": e,
                    "context_image": f"{e}-ctx.png",
                    "person_image": f"{e}-p.png",
                    "counterfactual_image": f"{e}-cf.png",
                    "context_label": f"{d} label {i % 3}",
                    "age_group": "Young",
                    "race": "Black",
                    "gender": "Woman",
                    "dimension": d,
                    "counterfactual_set": f"{d}-{i // 3}",
                }
            )
    write_pngs(folder, [r[k] for r in records for k in ("context_image", "person_image", "counterfactual_image")])
    import_ok(project, records, images=folder)
    prob = np.array([0.3, 0.15, 0.1, 0.05, 0.0, 0.0])
    raw: dict[str, list[str]] = {}

    def answers(e, u, a):
        ticked = [f for f, p in zip(CC_FLAGS, prob, strict=True) if rng.random() < p]
        raw[e] = ticked
        return {"flags": ticked}

    submit_humans(project, answers)
    assert len(raw) == 30  # k = 1: one judgement per image

    frame = selectors.ratings_frame(project)
    flags = [f"flags:{f}" for f in CC_FLAGS]
    got = flag_rates(frame[frame["field"].isin(flags)], flags=flags, by=["dimension"])
    dim = {e: e.split("-")[1] for e in raw}
    for f in CC_FLAGS:
        overall = np.mean([f in raw[e] for e in raw])
        assert close(got["overall"][f"flags:{f}"]["value"], overall), f
        assert got["overall"][f"flags:{f}"]["n_items"] == 30
        for d in CC_DIMS:
            sel = [e for e in raw if dim[e] == d]
            assert close(got["strata"]["dimension"][d][f"flags:{f}"]["value"], np.mean([f in raw[e] for e in sel]))
    # the preset's derived per-flag fields give the same rates (Table 4's labels)
    derived = flag_rates(frame[frame["field"].str.startswith("flag_")])
    assert close(derived["overall"]["flag_context_source"]["value"], np.mean([CC_FLAGS[0] in v for v in raw.values()]))
    any_fail = flag_rates(frame[frame["field"] == "any_failure"])["overall"]["any_failure"]["value"]
    assert close(any_fail, np.mean([len(v) > 0 for v in raw.values()]))


# ------------------------------------------------------------------------------ BLEnD-Vis
def test_blendvis_two_of_three_majority_bad_rate(tmp_path):
    rng = np.random.default_rng(8)
    owner = make_user("bv-owner", researcher=True)
    team = [make_user(f"bv-ann{i}") for i in range(3)]
    project = make_project("blendvis.image", owner=owner, annotators=team, k=3)
    folder = tmp_path / "bv-images"
    ids = [f"bv-{i:02d}" for i in range(30)]
    write_pngs(folder, [f"{e}.png" for e in ids])
    import_ok(
        project,
        [
            {
                "id": e,
                "image": f"{e}.png",
                "entity": f"dish {i}",
                "region": ["Spain", "Iran"][i % 2],
                "placeholder": "this food",
                "category": "food",
            }
            for i, e in enumerate(ids)
        ],
        images=folder,
    )
    p_bad = {e: (0.6 if i % 5 == 0 else 0.1) for i, e in enumerate(ids)}
    raw: dict[tuple[str, str], str] = {}

    def answers(e, u, a):
        v = "B" if rng.random() < p_bad[e] else "G"
        raw[(e, u)] = v
        return (
            {"verdict": v, "reason_category": "wrong_subject", "reason": "wrong dish"} if v == "B" else {"verdict": v}
        )

    submit_humans(project, answers)
    bad_votes = {e: sum(raw[(x, u)] == "B" for (x, u) in raw if x == e) for e in ids}
    assert {sum(1 for (x, _) in raw if x == e) for e in ids} == {3}
    want = np.mean([bad_votes[e] >= 2 for e in ids])
    assert 0 < want < 1

    frame = selectors.ratings_frame(project)
    # majority vote on the platform's verdicts (G = 1 in the derived field "good")
    good = wide(frame, "good").astype(float)
    maj = majority_vote(good.to_numpy())
    assert not np.isnan(maj).any()
    assert close(float(np.mean(maj == 0)), want)
    rep = services.compute_report(project=project, params=ReportParams(field="good", bootstrap=0))
    assert close(1 - rep["fields"]["good"]["humans_vs_humans"]["majority_positive_rate"], want)
    item_rates = flag_rates(frame[frame["field"] == "good"], unit="item")["overall"]["good"]
    assert close(1 - item_rates["value"], want) and item_rates["n_items"] == 30


# ------------------------------------------------------------------------------ CQ-Bench
def cqbench_story_project(prefix: str, preset_key: str = "cqbench.story"):
    """A CQ-Bench story project with 20 stories x 5 values, two annotators (``<prefix>-ann1``,
    ``<prefix>-ann2``) and the judge ``gpt-judge``, all rated through the services from seeded
    latent values. Returns (project, ids, raw human answers by (id, annotator), judge answers by id)."""
    rng = np.random.default_rng(21)
    owner = make_user(f"{prefix}-owner", researcher=True)
    team = [make_user(f"{prefix}-ann1"), make_user(f"{prefix}-ann2")]
    project = make_project(preset_key, owner=owner, annotators=team, k=2)
    ids = [f"cq-{i:02d}" for i in range(20)]
    import_ok(
        project,
        [
            {
                "id": e,
                "story": f"A: hello {e}\nB: hi",
                "category": "social values",
                "values": [{"statement": f"value {v}", "attitude": "agree"} for v in range(5)],
                "rewrites": [{"before": "x", "after": "y"}, {"before": "p", "after": "q"}],
            }
            for e in ids
        ],
    )
    latent = {q: {e: rng.random(5) for e in ids} for q in ("consistency", "reflection")}
    raw: dict[tuple[str, str], dict] = {}

    def binary(q, e, flip):
        return [int((latent[q][e][v] < 0.65) != (rng.random() < flip)) for v in range(5)]

    def answers(e, u, a):
        ans = {
            "consistency": binary("consistency", e, 0.15),
            "reflection": binary("reflection", e, 0.2),
            "rewrite_improvement": [int(x) for x in rng.integers(0, 6, size=2)],
            "naturalness": int(rng.integers(1, 6)),
        }
        raw[(e, u)] = ans
        return ans

    submit_humans(project, answers)
    judge_raw = {
        e: {
            "consistency": binary("consistency", e, 0.1),
            "reflection": binary("reflection", e, 0.1),
            "rewrite_improvement": [3, 3],
            "naturalness": 4,
        }
        for e in ids
    }
    submit_judge(project, "gpt-judge", lambda e: judge_raw[e])
    return project, ids, raw, judge_raw


def test_cqbench_story_kappa_and_agreement_restricted_to_model_positives():
    project, ids, raw, judge_raw = cqbench_story_project("cq")
    frame = selectors.ratings_frame(project)
    units = [(e, v) for e in ids for v in range(5)]
    u1, u2 = "cq-ann1", "cq-ann2"

    for q in ("reflection", "consistency"):
        f = f"{q}[*]"
        rep = services.compute_report(project=project, params=ReportParams(field=f, bootstrap=0))["fields"][f]
        h1 = np.array([raw[(e, u1)][q][v] for e, v in units])
        h2 = np.array([raw[(e, u2)][q][v] for e, v in units])
        j = np.array([judge_raw[e][q][v] for e, v in units])
        # Cohen's kappa between the two annotators over all (story, value) units
        ck = rep["humans_vs_humans"]["pairwise"]["cohen_kappa"]
        assert ck["raters"] == [u1, u2, "gpt-judge"]
        assert close(ck["matrix"][0][1], cohen_kappa(h1, h2)), q
        assert ck["pairs"][0]["n_items"] == 100
        # agreement restricted to model-positive values: vs each annotator, and vs the human
        # majority (2 annotators: units where they disagree have no majority and drop out)
        w = wide(frame, f).loc[[(e, v + 1) for e, v in units]]
        assert (w[u1].to_numpy() == h1).all() and (w["gpt-judge"].to_numpy() == j).all()
        for u, h in ((u1, h1), (u2, h2)):
            got = restricted_agreement(w["gpt-judge"].to_numpy(), w[u].to_numpy(), given="pred", side="positive")
            assert close(got.value, float(np.mean(h[j == 1] == 1))), (q, u)
            assert got.n_items == int((j == 1).sum())
        agree = h1 == h2
        bm = rep["judges_vs_humans"]["gpt-judge"]["binary_vs_majority"]
        assert close(bm["agreement_pred_positive"]["value"], float(np.mean(h1[(j == 1) & agree] == 1))), q
        assert bm["agreement_pred_positive"]["n_items"] == int(((j == 1) & agree).sum())
        assert close(bm["cohen_kappa"]["value"], cohen_kappa(j[agree], h1[agree])), q
    # mean rewrite improvement and naturalness over the human judgements
    ri = frame[(frame["field"] == "rewrite_improvement[*]") & (frame["rater_kind"] == "human")]["value"]
    assert close(
        float(ri.astype(float).mean()), float(np.mean([x for a in raw.values() for x in a["rewrite_improvement"]]))
    )
    nat = frame[(frame["field"] == "natural") & (frame["rater_kind"] == "human")]["value"]
    assert close(float(nat.astype(float).mean()), float(np.mean([a["naturalness"] >= 4 for a in raw.values()])))


def test_cqbench_turing_accuracy_ties_non_ties_and_binomial_test():
    rng = np.random.default_rng(4)
    owner = make_user("tt-owner", researcher=True)
    team = [make_user(f"tt-ann{i}") for i in range(3)]
    project = make_project("cqbench.turing", owner=owner, annotators=team, k=3)
    ids = [f"tt-{i:02d}" for i in range(40)]
    import_ok(project, [{"id": e, "human_utterance": f"human {e}", "model_utterance": f"model {e}"} for e in ids])
    raw: dict[tuple[str, str], str] = {}
    orders = set()

    def answers(e, u, a):
        choice = rng.choice(["human_utterance", "model_utterance", "tie"], p=[0.42, 0.43, 0.15])
        raw[(e, u)] = str(choice)
        order = a.presentation["pair_order"]["human_written"]  # randomised per assignment and stored
        orders.add(tuple(order))
        side = "tie" if choice == "tie" else ["left", "right"][order.index(choice)]
        return {"human_written": side}

    submit_humans(project, answers)
    assert len(orders) == 2 and len(raw) == 120

    frame = selectors.ratings_frame(project)
    hw = frame[frame["field"] == "human_written"]
    got = turing_accuracy(hw["value"].tolist(), truth=["human_utterance"] * len(hw), raters=hw["rater"].tolist())
    vals = np.array(list(raw.values()))
    correct, ties, n = int((vals == "human_utterance").sum()), int((vals == "tie").sum()), len(vals)
    pooled = got["pooled"]
    assert close(pooled["value"], correct / n)  # tie = 0
    assert close(pooled["accuracy_non_tie"], correct / (n - ties))
    assert close(pooled["tie_rate"], ties / n)
    assert close(pooled["p_value"], ss.binomtest(correct, n - ties, 0.5).pvalue)
    assert close(pooled["p_value_ties_incorrect"], ss.binomtest(correct, n, 0.5).pvalue)
    per = []
    for u in sorted({u for _, u in raw}):
        v = np.array([c for (_, uu), c in raw.items() if uu == u])
        c, t = int((v == "human_utterance").sum()), int((v == "tie").sum())
        r = got["per_rater"][u]
        assert close(r["value"], c / len(v)) and close(r["accuracy_non_tie"], c / (len(v) - t))
        assert close(r["p_value"], ss.binomtest(c, len(v) - t, 0.5).pvalue)
        per.append(c / len(v))
    assert close(got["macro_accuracy"], float(np.mean(per)))
    # the preset's derived fields (correct / tie) give the same accuracy and tie rate
    assert close(float(frame[frame["field"] == "correct"]["value"].astype(float).mean()), correct / n)
    assert close(float(frame[frame["field"] == "tie"]["value"].astype(float).mean()), ties / n)
    json.dumps(got)


def test_binary_fields_as_two_point_ordinal_scales_keep_nominal_alpha():
    """Binary answers are analysed as two-point ordinal scales (so phi correlations exist);
    Krippendorff's alpha is then exactly the nominal one (checked with the krippendorff package)."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, (4, 300)).astype(float)
    X[rng.random(X.shape) < 0.15] = np.nan
    nominal = krippendorff.alpha(reliability_data=X, level_of_measurement="nominal")
    ordinal = krippendorff.alpha(reliability_data=X, level_of_measurement="ordinal")
    assert abs(nominal - ordinal) < 1e-12
