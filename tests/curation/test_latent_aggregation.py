"""Issue 11, point 3: Dawid-Skene and MACE as acceptance aggregations (the rule on each item's
posterior labels, humans and judges together as raters) and the Dawid-Skene posterior in the
items export. Pure cases first (curation/policy.py), then through the services, API, page and
export."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.test import Client

from annotation.models import Item
from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from curation import services
from curation.exports import export_root, run_export_job
from curation.models import AcceptancePolicy, Export, ItemDecision
from curation.policy import (
    AGGREGATION_HELP,
    AGGREGATIONS,
    LatentCollector,
    PolicyError,
    PolicySpec,
    Rating,
    categorical_fields,
    compile_policy,
    decide,
)
from hvstats.latent import latent_truth_long

from .helpers import PASS, REJECT, judge_rates, submit_all, valueground_project

VG = "valueground.pair_quality"
EQ7 = "q1 + q2 >= 3 and q3 == 2 and q4 == 1"
QUESTIONS = ("q1", "q2", "q3", "q4")


def compiled(preset: str, **raw):
    rubric = Rubric.from_schema(get_preset(preset).rubric)
    return compile_policy(PolicySpec.parse(raw), rubric)


# ------------------------------------------------------------------------------ pure
def test_the_latent_aggregations_are_offered_with_an_explanation():
    assert AGGREGATIONS[-2:] == ("dawid_skene", "mace")
    assert set(AGGREGATION_HELP) == set(AGGREGATIONS) and all(AGGREGATION_HELP.values())


@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_the_rule_reads_categorical_questions_directly_and_through_derived_fields(method):
    assert compiled(VG, rule=EQ7, aggregation=method).latent_fields == QUESTIONS
    # `total` (Eq. 8) and `accepted` are recomputed from the posterior labels of q1..q4
    assert set(compiled(VG, rule="total >= 0.75", aggregation=method).latent_fields) == set(QUESTIONS)
    assert set(compiled(VG, rule="accepted", aggregation=method).latent_fields) == set(QUESTIONS)
    blend = compiled("blendvis.image", rule="good == 1", aggregation=method)
    assert blend.latent_fields == ("verdict",)


@pytest.mark.parametrize(
    "preset, rule, refused",
    [
        (VG, "q4 == 1 and feedback == ''", "feedback (a text question)"),
        ("counterfactuals.audit", "any_failure == 0", "flags (a checklist question, read by any_failure)"),
    ],
)
@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_fields_that_are_not_one_category_per_rating_are_refused(preset, rule, refused, method):
    with pytest.raises(PolicyError) as err:
        compiled(preset, rule=rule, aggregation=method)
    assert refused in err.value.message and f"aggregation '{method}' needs categorical fields" in err.value.message
    compiled(preset, rule=rule, aggregation="majority")  # the same rule is fine for the others


def noisy_ratings(n_items: int, seed: int = 0):
    """{item: [Rating]}: three humans and a judge rating q1..q4 of ValueGround with noise; a
    good human and the judge right 95% of the time, two weak humans 60%."""
    rng = np.random.default_rng(seed)
    options = {"q1": [0, 1, 2], "q2": [0, 1, 2], "q3": [0, 1, 2], "q4": [0, 1]}
    truth = {i: {q: int(rng.choice(o)) for q, o in options.items()} for i in range(n_items)}
    raters = [("h_good", "human", 0.95), ("h_weak1", "human", 0.6), ("h_weak2", "human", 0.6), ("gpt", "model", 0.95)]
    out = {}
    for i in range(n_items):
        out[i] = []
        for name, kind, acc in raters:
            answers = {q: (truth[i][q] if rng.random() < acc else int(rng.choice(o))) for q, o in options.items()}
            out[i].append(Rating(rater=name, kind=kind, answers=answers))
    return truth, out


@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_decisions_follow_the_posterior_labels_fitted_on_humans_and_judges(method):
    policy = compiled(VG, rule=EQ7, aggregation=method, min_human_ratings=3)
    _, ratings = noisy_ratings(120)
    collector = LatentCollector(policy.rubric, policy.latent_fields, method)
    for item, rs in ratings.items():
        collector.add(item, rs)
    latent = collector.fit()
    assert not latent.errors
    statuses = set()
    for q in QUESTIONS:  # the same posterior as the statistics core on the long table
        keys = [(i, r.rater, r.answers[q]) for i, rs in ratings.items() for r in rs]
        direct = latent_truth_long(
            [k[0] for k in keys],
            [k[1] for k in keys],
            [k[2] for k in keys],
            item_ids=list(ratings),
            method=method,
            categories=[0, 1] if q == "q4" else [0, 1, 2],
        )
        assert list(direct.labels) == [latent.item(i)[q][0] for i in ratings]
        assert set(direct.raters) == {"h_good", "h_weak1", "h_weak2", "gpt"}  # the judge is a rater
    for item, rs in ratings.items():
        labels = {q: latent.item(item)[q][0] for q in QUESTIONS}
        expected = "accepted" if labels["q1"] + labels["q2"] >= 3 and labels["q3"] == 2 and labels["q4"] == 1 else None
        v = decide(policy, rs, latent, item)
        assert v.status == (expected or "rejected"), v.reason
        assert v.details["latent"]["q4"]["label"] == labels["q4"] and v.details["n_raters"] == 4
        assert v.details["latent"]["q4"]["entropy"] >= 0
        statuses.add(v.status)
    assert statuses == {"accepted", "rejected"}


def test_dawid_skene_trusts_the_reliable_raters_where_all_and_majority_cannot():
    """Two humans who always answer q4 = 0 say nothing about q4: Dawid-Skene learns that from
    the whole project and follows the judge and the careful human, who agree."""
    rng = np.random.default_rng(4)
    policy = {a: compiled(VG, rule="q4 == 1", aggregation=a, min_human_ratings=3) for a in AGGREGATIONS}
    ratings, truth = {}, {}
    for i in range(60):
        truth[i] = int(rng.integers(0, 2))
        ratings[i] = [
            Rating("careful", "human", {"q4": truth[i]}),
            Rating("stuck_a", "human", {"q4": 0}),
            Rating("stuck_b", "human", {"q4": 0}),
            Rating("gpt", "model", {"q4": truth[i]}),
        ]
    collector = LatentCollector(policy["dawid_skene"].rubric, ("q4",), "dawid_skene")
    for i, rs in ratings.items():
        collector.add(i, rs)
    latent = collector.fit()
    for i, rs in ratings.items():
        want = "accepted" if truth[i] else "rejected"
        assert decide(policy["dawid_skene"], rs, latent, i).status == want
        if truth[i]:
            assert decide(policy["all"], rs).status == "rejected"
            assert decide(policy["majority"], rs).status == "rejected"  # 1 of 3 humans pass


def test_without_two_raters_on_any_item_every_item_waits_with_the_reason():
    policy = compiled(VG, rule=EQ7, aggregation="dawid_skene")
    collector = LatentCollector(policy.rubric, policy.latent_fields, "dawid_skene")
    ratings = {i: [Rating(f"h{i}", "human", PASS)] for i in range(3)}
    for i, rs in ratings.items():
        collector.add(i, rs)
    latent = collector.fit()
    v = decide(policy, ratings[0], latent, 0)
    assert (
        v.status == "pending"
        and "Dawid-Skene cannot be fitted" in v.reason
        and "q1, q2, q3, q4: latent-truth aggregation needs at least one item rated by two" in v.reason
    )
    assert decide(policy, ratings[0], None, 0).status == "pending"


def test_min_human_ratings_and_judge_screening_still_apply():
    policy = compiled(VG, rule=EQ7, aggregation="mace", min_human_ratings=2, judge_screening=True)
    _, ratings = noisy_ratings(30, seed=2)
    collector = LatentCollector(policy.rubric, policy.latent_fields, "mace")
    for i, rs in ratings.items():
        collector.add(i, rs)
    latent = collector.fit()
    one_human = [Rating("h_good", "human", PASS), Rating("gpt", "model", PASS)]
    v = decide(policy, one_human, latent, 0)
    assert v.status == "pending" and v.reason.startswith("1 of 2 required human rating(s)")
    judge_fails = [*ratings[1][:3], Rating("gpt", "model", REJECT)]
    assert decide(policy, judge_fails, latent, 1).reason.startswith("rejected by judge screening")


def test_categorical_fields_of_each_kind():
    assert categorical_fields(Rubric.from_schema(get_preset(VG).rubric)) == list(QUESTIONS)
    blend = categorical_fields(Rubric.from_schema(get_preset("blendvis.image").rubric))
    assert "verdict" in blend and "reason" not in blend


# ------------------------------------------------------------------------------ database
@pytest.fixture
def project(db, researcher, annotators, tmp_path):
    """Five items, three humans and a judge who agree: three pass Eq. 7, two do not."""
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=5, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {items[0].id: PASS, items[1].id: PASS, items[2].id: REJECT, items[3].id: REJECT, items[4].id: PASS}
    submit_all(project, lambda item, rater: plan[item.id])
    judge_rates(project, lambda item: plan[item.id])
    project.items_in_order = items
    return project


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_set_preview_and_apply_over_the_api(project, researcher, method):
    c = client_for(researcher)
    base = f"/api/projects/{project.id}"
    r = c.put(f"{base}/acceptance-policy/", {"aggregation": method}, content_type="application/json")
    assert r.status_code == 200 and r.json()["aggregation"] == method
    r = c.post(f"{base}/acceptance-policy/preview/", {}, content_type="application/json")
    assert r.status_code == 200 and r.json()["total"]["accepted"] == 3 and r.json()["total"]["rejected"] == 2
    accuracy = r.json()["rater_accuracy"]
    assert set(accuracy) == {"q1", "q2", "q3", "q4"}
    raters = set(accuracy["q1"])
    assert len(raters) == 4 and any(name.startswith("gpt-judge#") for name in raters)  # the judge counts
    assert all(0.0 <= a <= 1.0 for a in accuracy["q1"].values())
    r = c.post(f"{base}/decisions/apply/", {}, content_type="application/json")
    assert r.status_code == 200 and r.json()["counts"]["accepted"] == 3
    d = ItemDecision.objects.get(item=project.items_in_order[0])
    name = {"dawid_skene": "Dawid-Skene", "mace": "MACE"}[method]
    assert d.status == "accepted" and f"{name} posterior labels" in d.reason and "over 4 rater(s)" in d.reason
    assert d.details["latent"]["q1"]["label"] == 2 and d.details["aggregation"] == method
    assert c.get(f"{base}/acceptance-policy/").json()["aggregation"] == method


@pytest.mark.django_db
def test_a_refused_latent_policy_changes_nothing(project, researcher):
    services.set_policy(project=project, raw={"aggregation": "majority"}, user=researcher)
    before = AcceptancePolicy.objects.get(project=project).spec_dict()
    c = client_for(researcher)
    r = c.put(
        f"/api/projects/{project.id}/acceptance-policy/",
        {"aggregation": "dawid_skene", "rule": "q4 == 1 and feedback == ''"},
        content_type="application/json",
    )
    assert (
        r.status_code == 400 and "needs categorical fields" in r.json()["detail"] and "feedback" in r.json()["detail"]
    )
    assert AcceptancePolicy.objects.get(project=project).spec_dict() == before
    r = c.post(
        f"/projects/{project.id}/curation/policy/",
        {"rule": "q4 == 1 and feedback == ''", "aggregation": "mace", "min_human_ratings": "3", "apply": "1"},
    )
    assert r.status_code == 400 and b"needs categorical fields" in r.content
    assert AcceptancePolicy.objects.get(project=project).spec_dict() == before
    assert not ItemDecision.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_the_curation_page_offers_and_explains_them(project, researcher):
    c = client_for(researcher)
    r = c.get(f"/projects/{project.id}/curation/")
    page = r.content.decode()
    assert r.status_code == 200
    for a in ("dawid_skene", "mace"):
        assert f'<option value="{a}"' in page and f"<code>{a}</code>: " in page
    assert "Dawid-Skene posterior label" in page
    r = c.post(
        f"/projects/{project.id}/curation/preview/", {"rule": EQ7, "aggregation": "mace", "min_human_ratings": "3"}
    )
    assert r.status_code == 200 and b'data-testid="rater-accuracy"' in r.content and b"gpt-judge#" in r.content
    r = c.post(
        f"/projects/{project.id}/curation/policy/",
        {"rule": EQ7, "aggregation": "dawid_skene", "min_human_ratings": "3", "apply": "1"},
    )
    assert r.status_code == 302
    assert ItemDecision.objects.filter(project=project, status="accepted").count() == 3


@pytest.mark.django_db
def test_the_api_schema_describes_them(researcher):
    r = client_for(researcher).get("/api/schema/?format=json")
    assert (
        r.status_code == 200
        and "dawid_skene: the rule on each item's Dawid-Skene posterior label" in r.content.decode()
    )


@pytest.mark.django_db
def test_too_few_raters_leave_items_pending(db, researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:1], tmp_path / "img", n=3, k=1)
    submit_all(project, lambda item, rater: PASS)
    services.set_policy(project=project, raw={"aggregation": "dawid_skene"}, user=researcher)
    report = services.apply_policy(project=project, user=researcher)
    assert report.counts["pending"] == 3
    d = ItemDecision.objects.filter(project=project).first()
    assert "Dawid-Skene cannot be fitted" in d.reason


# ------------------------------------------------------------------------------ export
def run(project, user, fmt, scope="all") -> Export:
    export = Export.objects.create(project=project, created_by=user, content="items", format=fmt, scope=scope)
    export = run_export_job(export=export)
    assert export.status == "done", export.message
    return export


def read(export, fmt) -> pd.DataFrame:
    path = export_root(export) / f"items.{fmt}"
    return {
        "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False),
        "csv": lambda p: pd.read_csv(p, dtype=str, keep_default_na=False),
        "parquet": pd.read_parquet,
    }[fmt](path)


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_items_export_carries_the_dawid_skene_posterior(project, researcher, fmt):
    services.apply_policy(project=project, user=researcher)
    latent = services.latent_labels(project, project.rubric_version.parsed(), list(QUESTIONS), "dawid_skene")
    df = read(run(project, researcher, fmt), fmt)
    assert len(df) == 5
    for q in QUESTIONS:
        assert f"{q}__latent_label" in df.columns and f"{q}__latent_entropy" in df.columns
    by_id = {i.external_id: i.id for i in project.items_in_order}
    for _, row in df.iterrows():
        posterior = latent.item(by_id[row["id"]])
        for q in QUESTIONS:
            label, ent = posterior[q]
            assert int(row[f"{q}__latent_label"]) == label
            assert float(row[f"{q}__latent_entropy"]) == pytest.approx(ent, abs=1e-9)
    if fmt == "parquet":
        schema = pq.read_schema(export_root(run(project, researcher, fmt)) / "items.parquet")
        assert str(schema.field("q1__latent_label").type) == "int64"


@pytest.mark.django_db
def test_items_export_leaves_the_posterior_empty_without_two_raters_on_an_item(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:1], tmp_path / "img", n=2, k=1)
    submit_all(project, lambda item, rater: PASS)
    rows = [json.loads(x) for x in (export_root(run(project, researcher, "jsonl")) / "items.jsonl").open()]
    assert len(rows) == 2
    assert all(r["q1__latent_label"] is None and r["q1__latent_entropy"] is None for r in rows)


@pytest.mark.django_db
def test_latent_labels_in_csv_go_through_the_formula_guard(project, researcher, monkeypatch):
    """A label is written by the same CSV writer as every cell: one that reads as a formula is
    quoted (a choice option could be such text)."""
    from curation.policy import LatentLabels

    monkeypatch.setattr(LatentLabels, "item", lambda self, item_id: {"q1": ("=1+1", 0.5)})
    with open(export_root(run(project, researcher, "csv")) / "items.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["q1__latent_label"] == "'=1+1" and r["q1__latent_entropy"] == "0.5" for r in rows)
    assert all(r["q2__latent_label"] == "" for r in rows)


@pytest.mark.django_db
def test_a_failing_model_fails_the_whole_export(project, researcher, monkeypatch):
    from curation.exports import items

    def boom(*args, **kwargs):
        raise RuntimeError("model exploded")

    monkeypatch.setattr(items, "latent_labels", boom)
    export = Export.objects.create(project=project, created_by=researcher, content="items", format="csv", scope="all")
    export = run_export_job(export=export)
    assert export.status == "failed" and "model exploded" in export.message
    assert not list(export_root(export).glob("items.csv")) and not list(export_root(export).rglob(".tmp-*"))
