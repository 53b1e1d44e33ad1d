"""Exports keep what the study was (issue 14, point 5): the images' original file names, item
metadata as columns, the provenance (design sample, plan, judge configurations with secrets
hidden, annotators as a group), annotator attributes and time on task per annotation row, and
the answers that edits replaced."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.test import Client

from accounts.services import preferred_language
from annotate import annotating
from annotation import importing
from annotation.models import Annotation, AnnotationRevision, Assignment, Item, Rater
from annotation.projects import rater_for_user
from curation.exports import export_root, run_export_job
from curation.exports.huggingface import MAX_COMPONENT_BYTES, ImagePlaces
from curation.exports.provenance import public_attributes
from curation.models import Export
from judges.models import JudgeConfig, JudgeRun
from studies import plans, sampling
from tests.annotation.factories import jsonl, make_project, png_bytes

from .helpers import PASS, REJECT

pytestmark = pytest.mark.django_db

LEAK = "sk-LEAKED-1234567890"
RED, GREEN, BLUE = png_bytes((200, 0, 0)), png_bytes((0, 200, 0)), png_bytes((0, 0, 200))


def records(folder: Path) -> list[dict]:
    """Four pairs: image names in folders, two names that differ only in case (different
    images), one image used twice under the same name, one file without an extension."""
    (folder / "set1").mkdir(parents=True)
    (folder / "SET1").mkdir()
    (folder / "photos").mkdir()
    (folder / "set1" / "a.png").write_bytes(RED)
    (folder / "SET1" / "A.png").write_bytes(GREEN)
    (folder / "photos" / "noext").write_bytes(BLUE)
    for i in range(4):
        (folder / f"b{i}.png").write_bytes(png_bytes((10 * i, 90, 90)))
    base = {"question": "How important is family?", "option_a": "Very", "option_b": "Not at all"}
    image_a = ["set1/a.png", "SET1/A.png", "set1/a.png", "photos/noext"]
    metas = [{"source": "web", "score": 3}, {"source": "print"}, None, {"flag": True}]
    out = []
    for i in range(4):
        r = {**base, "id": f"vg{i}", "image_a": image_a[i], "image_b": f"b{i}.png", "country": "China"}
        r["generator"] = "gpt" if i % 2 else "gemini"
        if metas[i]:
            r["meta"] = metas[i]
        out.append(r)
    return out


@pytest.fixture
def people(annotators):
    """Three annotators: one whose profile also holds identifying attributes (never exported)."""
    attrs = [
        {"nationality": "Germany", "email": "ann1@example.org", "prolific_pid": "PID-SECRET-9", "crowd": True},
        {"nationality": "China"},
        {},
    ]
    for user, a in zip(annotators[:3], attrs, strict=True):
        rater = rater_for_user(user)
        rater.attributes = a
        rater.save(update_fields=["attributes"])
    return annotators[:3]


@pytest.fixture
def project(researcher, people, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=people, k=3)
    folder = tmp_path / "img"
    folder.mkdir()
    report = importing.import_items(project=project, data=jsonl(records(folder)), data_format="jsonl", images=folder)
    assert report.ok, report.errors
    for n, a in enumerate(Assignment.objects.filter(project=project).order_by("id")):
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers=PASS, duration_ms=1000 + n)
    # one edit: its earlier answer goes to the history file
    first = Assignment.objects.filter(project=project, rater__user=people[1]).order_by("id").first()
    annotating.submit_annotation(assignment_id=first.id, rater=first.rater, answers=REJECT, duration_ms=777, edit=True)
    project.edited = first
    # the design: a sample by generator and a plan with balance quotas
    sample = sampling.draw_sample(project=project, name="pilot", strata_keys=["generator"], per_stratum=1, seed=7)
    plans.create_plan(
        sample=sample,
        name="balanced",
        mode="pooled",
        k=2,
        balance={"attribute": "nationality", "quota": {"China": 1, "Germany": 1}},
    )
    project.sample = sample
    # two judges: a visible one whose row holds literal secrets stored before they were refused,
    # and a hidden one
    judge = JudgeConfig.objects.create(
        project=project,
        name="gpt-judge",
        backend="openai_chat",
        model_id="gpt-4o-mini",
        prompt_template={"system": "You rate pairs.", "user": "{question}", "api_key": LEAK},
        parser="json",
        questions=["q1", "q2"],
        params={"temperature": 0, "api_key": LEAK, "headers": {"Authorization": f"Bearer {LEAK}"}},
        passes=2,
        rater=Rater.objects.create(kind="model", name="judge: gpt-judge", backend="openai_chat", prompt_hash="ab" * 32),
    )
    project.run = JudgeRun.objects.create(config=judge, project=project, total=4, status="done")
    hidden = JudgeConfig.objects.create(
        project=project,
        name="hidden-judge",
        backend="openai_chat",
        model_id="hidden-model",
        hidden=True,
        rater=Rater.objects.create(kind="model", name="judge: hidden-judge", backend="openai_chat"),
    )
    JudgeRun.objects.create(config=hidden, project=project, total=4, status="done")
    return project


def run(project, user, content, fmt, scope="all") -> Export:
    export = run_export_job(
        export=Export.objects.create(project=project, created_by=user, content=content, format=fmt, scope=scope)
    )
    assert export.status == "done", export.message
    return export


def read(path: Path, fmt: str) -> pd.DataFrame:
    return {
        "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False),
        "csv": lambda p: pd.read_csv(p, dtype=str, keep_default_na=False),
        "parquet": pd.read_parquet,
    }[fmt](path)


def every_byte(export: Export) -> bytes:
    """Every file the export wrote, zip members included, as one blob to search."""
    blob = b""
    for path in sorted(export_root(export).rglob("*")):
        if path.is_file():
            blob += path.read_bytes()
            if path.suffix == ".zip":
                with zipfile.ZipFile(path) as zf:
                    blob += b"".join(zf.read(n) for n in zf.namelist())
    return blob + json.dumps(export.provenance).encode()


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# ---------------------------------------------------------------------------- original image names
def test_the_importer_keeps_each_images_original_name(project):
    names = dict(Item.objects.filter(project=project).values_list("external_id", "image_names"))
    assert names["vg0"] == {"image_a": "set1/a.png", "image_b": "b0.png"}
    assert names["vg1"]["image_a"] == "SET1/A.png" and names["vg3"]["image_a"] == "photos/noext"
    # the data still holds the content hash: images are stored once by it
    assert Item.objects.get(project=project, external_id="vg1").data["image_a"] == sha(GREEN)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_item_exports_name_the_original_file_beside_the_hash(project, researcher, fmt):
    df = read(export_root(run(project, researcher, "items", fmt)) / f"items.{fmt}", fmt).set_index("id")
    assert df.loc["vg0", "image_a"] == sha(RED) and df.loc["vg0", "image_a__filename"] == "set1/a.png"
    assert df.loc["vg1", "image_a__filename"] == "SET1/A.png" and df.loc["vg3", "image_b__filename"] == "b3.png"
    columns = list(df.reset_index().columns)
    assert columns.index("image_a__filename") == columns.index("image_a") + 1


def test_hugging_face_images_keep_their_names_without_clashes(project, researcher):
    export = run(project, researcher, "items", "hf")
    root = export_root(export) / "dataset"
    df = pq.read_table(root / "data" / "train-00000-of-00001.parquet").to_pandas().set_index("id")
    paths = {i: df.loc[i, "image_a"]["path"] for i in df.index}
    assert paths["vg0"] == paths["vg2"] == "images/set1/a.png"  # one image, one name: written once
    # another image under a name that differs only in case gets its hash: no clash on any disk
    assert paths["vg1"] == f"images/SET1/A-{sha(GREEN)[:12]}.png"
    assert paths["vg3"] == "images/photos/noext.png"  # the image's own extension added
    assert df.loc["vg0", "image_b"]["path"] == "images/b0.png"
    for i, p in paths.items():
        assert (root / p).read_bytes() == df.loc[i, "image_a"]["bytes"]
    assert (root / paths["vg1"]).read_bytes() == GREEN and (root / paths["vg0"]).read_bytes() == RED
    assert df.loc["vg1", "image_a__filename"] == "SET1/A.png"
    written = sorted(str(p.relative_to(root)) for p in (root / "images").rglob("*") if p.is_file())
    assert len(written) == 7 == {f["name"]: f for f in export.files}["dataset/images/"]["rows"]
    with zipfile.ZipFile(export_root(export) / "dataset.zip") as zf:
        assert {f"dataset/{p}" for p in written} <= set(zf.namelist())
        assert zf.read("dataset/images/SET1/A-" + sha(GREEN)[:12] + ".png") == GREEN


def test_hugging_face_folder_with_names_and_meta_loads_with_datasets(project, researcher):
    import datasets  # a dev requirement: this round trip always runs

    export = run(project, researcher, "items", "hf")
    ds = datasets.load_dataset(str(export_root(export) / "dataset"), split="train")
    row = next(r for r in ds if r["id"] == "vg0")
    assert row["image_a"].size == (32, 24) and row["image_a__filename"] == "set1/a.png"
    assert row["meta.source"] == "web" and row["meta.score"] == "3"


@pytest.mark.parametrize(
    ("name", "placed"),
    [
        ("../../etc/passwd", "images/etc/passwd.png"),
        ("/abs/x.png", "images/abs/x.png"),
        ("a/./b/../c.png", "images/a/b/c.png"),
        ("C:\\win\\d.png", "images/C_/win/d.png"),
        ('we<i>rd|"na:me?*.png', "images/we_i_rd__na_me__.png"),
        ("bell\x07\n.png", "images/bell__.png"),
        (".hidden.png", "images/_hidden.png"),
        ("..", f"images/{'f' * 64}.png"),
        (None, f"images/{'f' * 64}.png"),
    ],
)
def test_image_places_never_leave_the_images_folder(name, placed):
    got, new = ImagePlaces().place("f" * 64, "png", name)
    assert (got, new) == (placed, True)


def test_image_places_deduplicate_files_and_folders():
    places = ImagePlaces()
    a, b, c = "a" * 64, "b" * 64, "c" * 64
    assert places.place(a, "png", "x/y.png") == ("images/x/y.png", True)
    assert places.place(a, "png", "x/y.png") == ("images/x/y.png", False)  # the same file again
    assert places.place(b, "png", "X/Y.PNG") == (f"images/X/Y-{b[:12]}.PNG", True)
    assert places.place(c, "png", "x") == ("images/x.png", True)  # the image's extension added
    # a folder whose name is a file already: the image goes to the top under its own name
    assert places.place(c, "png", "x.png/z.png") == ("images/z.png", True)
    assert places.place(b, "png", "X") == (f"images/X-{b[:12]}.png", True)
    # a file whose name is a folder already
    assert places.place(a, "png", "d.png/e.png") == ("images/d.png/e.png", True)
    assert places.place(b, "png", "D.png") == (f"images/D-{b[:12]}.png", True)
    assert places.place(c, "png", "d.png") == (f"images/d-{c[:12]}.png", True)
    long = "é" * 200 + ".jpeg"
    got, _ = places.place(a, "jpg", long)
    assert got.endswith(".jpeg") and len(got.removeprefix("images/").encode()) <= MAX_COMPONENT_BYTES


def test_a_revision_keeps_the_names_of_the_images_it_reuses(project, researcher):
    from curation import services

    vg0 = Item.objects.get(project=project, external_id="vg0")
    record = {
        "id": "vg0",
        "question": "A better question?",
        "option_a": "Yes",
        "option_b": "No",
        "image_a": f"sha256:{vg0.data['image_a']}",
        "image_b": f"sha256:{vg0.data['image_b']}",
    }
    report = services.import_revisions(project=project, data=jsonl([record]))
    assert report.ok, report.errors
    v2 = Item.objects.get(project=project, external_id="vg0", version=2)
    assert v2.image_names == {"image_a": "set1/a.png", "image_b": "b0.png"}


# ---------------------------------------------------------------------------- meta as columns
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_meta_keys_are_columns_and_the_json_stays(project, researcher, fmt):
    df = read(export_root(run(project, researcher, "items", fmt)) / f"items.{fmt}", fmt).set_index("id")
    assert {"meta.source", "meta.score", "meta.flag"} <= set(df.columns)
    assert df.loc["vg0", "meta.source"] == "web" and df.loc["vg0", "meta.score"] == "3"
    assert df.loc["vg3", "meta.flag"] == "true"  # text in every format; the JSON keeps the type
    missing = df.loc["vg2", "meta.source"]
    assert missing == "" if fmt == "csv" else pd.isna(missing)  # an item without the key
    meta = df.loc["vg0", "meta"]
    assert (json.loads(meta) if isinstance(meta, str) else meta) == {"source": "web", "score": 3}
    samples = df.loc[df["sample_ids"].astype(str).str.contains(str(project.sample.id))].index
    assert len(samples) == 2  # one item per generator stratum was drawn


def test_meta_columns_are_defused_in_csv(researcher, people, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=people, k=3)
    folder = tmp_path / "img2"
    folder.mkdir()
    recs = records(folder)[:1]
    recs[0]["meta"] = {"note": '=HYPERLINK("http://x")'}
    assert importing.import_items(project=project, data=jsonl(recs), data_format="jsonl", images=folder).ok
    export = run(project, researcher, "items", "csv")
    rows = list(csv.DictReader(io.StringIO((export_root(export) / "items.csv").read_text())))
    assert rows[0]["meta.note"] == '\'=HYPERLINK("http://x")'


# ---------------------------------------------------------------------------- provenance
def test_provenance_records_the_design_the_judges_and_the_annotators(project, researcher):
    export = run(project, researcher, "items", "hf")
    for path in (export_root(export) / "provenance.json", export_root(export) / "dataset" / "provenance.json"):
        prov = json.loads(path.read_text())
        (sample,) = prov["design"]["samples"]
        assert sample["id"] == project.sample.id and sample["seed"] == 7 and sample["strata_keys"] == ["generator"]
        assert sample["size"] == 2 and sample["per_stratum"] == 1
        assert {s["label"]: s["drawn"] for s in sample["strata"]} == {"gemini": 1, "gpt": 1}
        (plan,) = prov["design"]["plans"]
        assert plan["sample"] == sample["id"] and plan["k"] == 2 and plan["mode"] == "pooled"
        assert plan["balance"] == {"attribute": "nationality", "quota": {"China": 1, "Germany": 1}}
        (judge,) = prov["judges"]  # the hidden judge is left out
        assert judge["name"] == "gpt-judge" and judge["backend"] == "openai_chat"
        assert judge["model"] == "gpt-4o-mini" and judge["parser"] == "json" and judge["passes"] == 2
        assert judge["questions"] == ["q1", "q2"] and judge["prompt_template"]["system"] == "You rate pairs."
        assert judge["params"] == {"temperature": 0, "api_key": "(hidden)", "headers": {"Authorization": "(hidden)"}}
        assert judge["prompt_template"]["api_key"] == "(hidden)"
        assert [r["id"] for r in judge["runs"]] == [project.run.id]
        annotators = prov["annotators"]
        assert annotators["count"] == 3
        assert annotators["attributes"] == {"crowd": {"true": 1}, "nationality": {"China": 1, "Germany": 1}}
        assert prov["rubric"]["version"] == 1
    assert export.provenance["judges"][0]["runs"][0]["id"] == project.run.id  # on the export row too
    blob = every_byte(export)
    assert LEAK.encode() not in blob and b"hidden-judge" not in blob and b"hidden-model" not in blob
    assert b"ann1@example.org" not in blob and b"PID-SECRET-9" not in blob


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_annotation_rows_carry_attributes_and_time_on_task_and_no_identities(project, researcher, fmt):
    export = run(project, researcher, "annotations", fmt)
    df = read(export_root(export) / f"annotations.{fmt}", fmt)
    assert {"duration_ms", "rater.nationality", "rater.crowd"} <= set(df.columns)
    assert not {c for c in df.columns if "email" in c or "pid" in c}
    q1 = df[df["field"] == "q1"]
    assert sorted(q1["rater.nationality"].replace({None: ""}).unique()) == ["", "China", "Germany"]
    assert set(q1[q1["rater.nationality"] == "Germany"]["rater.crowd"]) == {"true"}
    want = sorted(Annotation.objects.filter(item__project=project).values_list("duration_ms", flat=True))
    assert sorted(q1["duration_ms"].astype(int)) == want and 777 in want  # the edit's own time
    blob = every_byte(export)
    assert b"ann1@example.org" not in blob and b"PID-SECRET-9" not in blob and LEAK.encode() not in blob
    assert b"ann1" not in blob and b"ann2" not in blob  # pseudonyms only


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_the_answers_edits_replaced_are_exported(project, researcher, fmt):
    export = run(project, researcher, "annotations", fmt)
    main = read(export_root(export) / f"annotations.{fmt}", fmt)
    history = read(export_root(export) / f"annotation_history.{fmt}", fmt)
    assert len(history) == 1 == {f["name"]: f for f in export.files}[f"annotation_history.{fmt}"]["rows"]
    row = history.iloc[0]
    answers = row["answers"]
    answers = json.loads(answers) if isinstance(answers, str) else answers
    assert answers == AnnotationRevision.objects.get().answers and PASS.items() <= answers.items()
    assert int(row["revision"]) == 1 and int(row["rubric_version"]) == 1 and int(row["duration_ms"]) >= 1000
    edited = project.edited
    assert row["item"] == edited.item.external_id
    # the same pseudonym as the rater's current rows, whose revision is the next one
    current = main[(main["rater"] == row["rater"]) & (main["item"] == row["item"]) & (main["field"] == "q1")]
    assert len(current) == 1 and int(current.iloc[0]["annotation_revision"]) == 2
    assert int(current.iloc[0]["value"]) == REJECT["q1"]


def test_the_ui_language_an_annotator_chose_is_no_rater_attribute(project, researcher, people):
    """Issue 25: the UI language is the account's preference, not a profile attribute: no export,
    provenance, dashboard table or annotator list carries it."""
    for user, code in zip(people, ("de", "zh-hans", "en"), strict=True):
        c = Client()
        c.force_login(user)
        assert c.post("/account/language/", {"language": code, "next": "/"}).status_code == 302
    assert [preferred_language(u) for u in people] == ["de", "zh-hans", "en"]  # kept: it follows them
    for content, fmt in (("annotations", "csv"), ("annotations", "jsonl"), ("annotations", "parquet"), ("items", "hf")):
        export = run(project, researcher, content, fmt)
        assert b"ui_language" not in every_byte(export), (content, fmt)
        if content == "annotations":
            df = read(export_root(export) / f"annotations.{fmt}", fmt)
            assert {c for c in df.columns if c.startswith("rater.")} == {"rater.nationality", "rater.crowd"}
    assert export.provenance["annotators"]["attributes"] == {
        "crowd": {"true": 1},
        "nationality": {"China": 1, "Germany": 1},
    }
    c = Client()
    c.force_login(researcher)
    for url in (
        f"/projects/{project.id}/dashboard/annotators.csv",
        f"/projects/{project.id}/dashboard/",
        f"/projects/{project.id}/annotators/",
        f"/projects/{project.id}/design/",
        f"/api/projects/{project.id}/agreement/",
    ):
        r = c.get(url)
        assert r.status_code == 200, (url, r.status_code)
        body = b"".join(r.streaming_content) if r.streaming else r.content
        assert b"ui_language" not in body, url
        if url.endswith(".csv"):  # the annotators' attributes, as the researcher set them
            assert b"zh-hans" not in body and b"nationality=Germany" in body, body


def test_public_attributes_keep_what_describes_and_drop_what_identifies():
    attrs = {
        "nationality": "Germany",
        "language": "de",
        "crowd": True,
        "email": "x@y.org",
        "contactEmail": "x@y.org",
        "prolific_pid": "abc",
        "full_name": "Ada",
        "api_token": "t",
        "note": "mail me at someone@example.org",
    }
    assert public_attributes(attrs) == {"nationality": "Germany", "language": "de", "crowd": True}
