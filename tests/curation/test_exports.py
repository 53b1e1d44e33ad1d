"""Exports written by the job (called directly here; test_export_worker.py runs it on a real
worker) and loaded back with pandas / pyarrow / datasets, compared with the database."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.conf import settings

from agreement.selectors import submitted_annotations
from annotation.models import Annotation, Asset, Item
from curation import services
from curation.exports import export_root, run_export_job
from curation.models import Export

from .helpers import FAIL, PASS, REJECT, judge_rates, submit_all, valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=5, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {items[0].id: PASS, items[1].id: PASS, items[2].id: REJECT, items[3].id: FAIL, items[4].id: PASS}
    submit_all(project, lambda item, rater: plan[item.id])
    judge_rates(project, lambda item: PASS)
    services.apply_policy(project=project, user=researcher)
    project.items_in_order = items
    return project


def run(project, user, content, fmt, scope="accepted") -> Export:
    export = Export.objects.create(project=project, created_by=user, content=content, format=fmt, scope=scope)
    export = run_export_job(export=export)
    assert export.status == "done", export.message
    return export


def files(export):
    return {f["name"]: f for f in export.files}


def check_listing(export):
    root = export_root(export)
    for f in export.files:
        if f["sha256"] is None:
            continue
        path = root / f["name"]
        assert path.stat().st_size == f["size"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]
    assert not list(root.rglob(".tmp-*")), "temporary files left behind"


def accepted_ids(project):
    accepted = Item.objects.filter(project=project, decision__status="accepted")
    return sorted(accepted.values_list("external_id", flat=True))


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_accepted_items_round_trip(project, researcher, fmt):
    export = run(project, researcher, "items", fmt)
    name = f"items.{fmt}"
    path = export_root(export) / name
    df = {
        "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False),
        "csv": lambda p: pd.read_csv(p, dtype=str),
        "parquet": pd.read_parquet,
    }[fmt](path)
    assert sorted(df["id"]) == accepted_ids(project) and len(df) == 3
    assert files(export)[name]["rows"] == 3
    check_listing(export)
    for _, row in df.iterrows():
        item = Item.objects.get(project=project, external_id=row["id"])
        assert row["question"] == item.data["question"]
        assert row["image_a"] == item.data["image_a"]  # the image's sha256
        assert row["status"] == "accepted" and row["generator"] == item.generator
        assert float(row["mean_q1"]) == 2.0 and int(row["n_human_ratings"]) == 3
    prov = json.loads((export_root(export) / "provenance.json").read_text())
    assert prov["rubric"] == {
        "key": "valueground.pair_quality",
        "version": 1,
        "schema_sha256": project.rubric_version.schema_hash,
    }
    assert prov["acceptance_policy"]["rule"] == "q1 + q2 >= 3 and q3 == 2 and q4 == 1"
    assert prov["platform_version"] and prov["export"]["exported_at"]
    if fmt == "parquet":
        meta = pq.read_schema(path).metadata
        assert json.loads(meta[b"hv_provenance"])["export"]["id"] == export.id


def test_all_items_scope(project, researcher):
    export = run(project, researcher, "items", "jsonl", scope="all")
    rows = [json.loads(line) for line in (export_root(export) / "items.jsonl").read_text().splitlines()]
    assert {r["status"] for r in rows} == {"accepted", "rejected", "needs_revision"} and len(rows) == 5


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_annotations_long_format_round_trip(project, researcher, fmt):
    export = run(project, researcher, "annotations", fmt, scope="all")
    path = export_root(export) / f"annotations.{fmt}"
    df = {
        "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False),
        "csv": lambda p: pd.read_csv(p, dtype=str),
        "parquet": pd.read_parquet,
    }[fmt](path)
    assert list(df.columns[:7]) == ["item", "item_version", "rater", "rater_kind", "field", "value", "value_num"]
    n_ann = submitted_annotations(project).count()
    assert n_ann == 20  # 5 items x (3 annotators + 1 judge)
    # q1..q4, total, accepted per annotation; feedback where written
    expected = (
        6 * n_ann
        + Annotation.objects.filter(item__project=project, answers__feedback__isnull=False)
        .exclude(answers__feedback=None)
        .count()
    )
    assert len(df) == expected == files(export)[f"annotations.{fmt}"]["rows"]
    # compare every q1 with the database, through the pseudonyms
    q1 = df[df["field"] == "q1"]
    db = sorted((a.item.external_id, a.answers["q1"]) for a in Annotation.objects.filter(item__project=project))
    assert sorted(zip(q1["item"], q1["value"].astype(int), strict=True)) == db
    # pseudonyms: consistent within the export, no user names, 4 raters
    assert df["rater"].nunique() == 4 and df["rater"].str.match(r"^r_[0-9a-f]{12}$").all()
    names = {"ann1", "ann2", "ann3", "gpt-judge"}
    assert not names & set(df["rater"])
    per_rater_items = df[df["field"] == "q1"].groupby("rater")["item"].nunique()
    assert (per_rater_items == 5).all()
    judge = df[df["rater_kind"] == "model"]
    assert set(judge["judge_model"]) == {"gpt-judge"} and set(judge["judge_prompt_hash"]) == {"ab" * 32}
    params = judge["judge_parameters"].iloc[0]
    assert (json.loads(params) if isinstance(params, str) else params) == {"temperature": 0}
    assert df[df["rater_kind"] == "human"]["judge_model"].isna().all()
    assert (df["rubric_version"].astype(int) == 1).all() and df["created_at"].notna().all()
    check_listing(export)


def test_pseudonyms_differ_between_exports(project, researcher):
    a = run(project, researcher, "annotations", "parquet", scope="all")
    b = run(project, researcher, "annotations", "parquet", scope="all")
    ra = set(pd.read_parquet(export_root(a) / "annotations.parquet")["rater"])
    rb = set(pd.read_parquet(export_root(b) / "annotations.parquet")["rater"])
    assert len(ra) == len(rb) == 4 and not ra & rb


def test_accepted_annotations_only(project, researcher):
    export = run(project, researcher, "annotations", "csv")
    df = pd.read_csv(export_root(export) / "annotations.csv", dtype=str)
    assert sorted(df["item"].unique()) == accepted_ids(project)


def test_hugging_face_folder(project, researcher):
    export = run(project, researcher, "items", "hf")
    root = export_root(export) / "dataset"
    listed = files(export)
    assert {
        "dataset.zip",
        "dataset/data/train-00000-of-00001.parquet",
        "dataset/README.md",
        "dataset/provenance.json",
        "dataset/images/",
        "provenance.json",
    } <= set(listed)
    check_listing(export)
    table = pq.read_table(root / "data" / "train-00000-of-00001.parquet")
    df = table.to_pandas()
    assert sorted(df["id"]) == accepted_ids(project)
    row = df.iloc[0]
    item = Item.objects.get(project=project, external_id=row["id"])
    asset = Asset.objects.get(sha256=item.data["image_a"])
    stored = (Path(settings.MEDIA_ROOT) / asset.relative_path()).read_bytes()
    # the image under the name it was imported under (a0.png ...), not its hash
    assert row["image_a"]["bytes"] == stored and row["image_a"]["path"] == f"images/{item.image_names['image_a']}"
    assert item.image_names["image_a"].startswith("a") and row["image_a__filename"] == item.image_names["image_a"]
    assert (root / row["image_a"]["path"]).read_bytes() == stored
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["image_a"] == {"_type": "Image"} and features["question"]["dtype"] == "string"
    card = (root / "README.md").read_text()
    assert card.startswith("---\n") and "path: data/train-*.parquet" in card
    assert "q1 + q2 >= 3 and q3 == 2 and q4 == 1" in card  # the acceptance policy
    assert "valueground.pair_quality" in card and "version 1" in card  # protocol, rubric version
    assert "Eq. 7" in card and "ValueGround" in card
    assert "krippendorff_alpha" in card  # agreement figures
    with zipfile.ZipFile(export_root(export) / "dataset.zip") as zf:
        assert "dataset/README.md" in zf.namelist() and "dataset/data/train-00000-of-00001.parquet" in zf.namelist()
    assert listed["dataset/images/"]["rows"] == 6  # 3 accepted pairs, 2 images each


def test_hugging_face_folder_loads_with_datasets(project, researcher):
    import datasets  # a dev requirement: this round trip always runs

    export = run(project, researcher, "items", "hf")
    ds = datasets.load_dataset(str(export_root(export) / "dataset"), split="train")
    assert len(ds) == 3 and sorted(ds["id"]) == accepted_ids(project)
    image = ds[0]["image_a"]
    assert image.size == (32, 24)  # a PIL image, decoded by datasets


def test_a_failing_export_records_why(project, researcher, monkeypatch):
    from curation.exports import runner

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(runner, "export_items", boom)
    export = Export.objects.create(project=project, created_by=researcher, content="items", format="jsonl")
    export = run_export_job(export=export)
    assert export.status == "failed" and "disk full" in export.message
