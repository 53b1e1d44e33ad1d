"""Imports are all or nothing, with line numbers; hostile input changes nothing."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from annotation import importing
from annotation.models import Annotation, Asset, Assignment, Item

from .factories import jsonl, make_project, png_bytes, turing_records, valueground_records, zip_of

pytestmark = pytest.mark.django_db


def snapshot():
    return (Item.objects.count(), Asset.objects.count(), Assignment.objects.count(), Annotation.objects.count())


def test_turing_import_creates_items_and_k_assignments(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=2)
    report = importing.import_items(project=project, data=jsonl(turing_records(5)), data_format="jsonl")
    assert report.ok and report.items_created == 5 and report.assignments_created == 10
    item = Item.objects.get(external_id="t1")
    assert item.country == "Japan" and item.data["human_utterance"] == "human says 1"
    orders = {tuple(a.presentation["pair_order"]["human_written"]) for a in Assignment.objects.all()}
    assert orders <= {("human_utterance", "model_utterance"), ("model_utterance", "human_utterance")}


def test_k_caps_annotators_per_item(researcher):
    from .factories import make_user

    people = [make_user(f"a{i}") for i in range(4)]
    project = make_project("cqbench.turing", owner=researcher, annotators=people, k=3)
    importing.import_items(project=project, data=jsonl(turing_records(8)), data_format="jsonl")
    per_item = Assignment.objects.values("item").annotate(n=__import__("django.db.models").db.models.Count("id"))
    assert {row["n"] for row in per_item} == {3}
    loads = Assignment.objects.values("rater").annotate(n=__import__("django.db.models").db.models.Count("id"))
    assert sorted(r["n"] for r in loads) == [6, 6, 6, 6]  # rotation spreads the load


def test_csv_import_with_meta_columns_and_json_cells(researcher, annotators):
    project = make_project("cqbench.story", owner=researcher, annotators=annotators)
    values = json.dumps([{"statement": f"v{i}", "attitude": "agree"} for i in range(5)])
    rewrites = json.dumps([{"before": "b", "after": "a"}])
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "story", "values", "rewrites", "country", "meta.batch"])
    writer.writerow(["s1", "A story, with a comma", values, rewrites, "Korea", "7"])
    report = importing.import_items(project=project, data=out.getvalue(), data_format="csv")
    assert report.ok, report.errors
    item = Item.objects.get(external_id="s1")
    assert item.meta == {"batch": "7"} and len(item.data["values"]) == 5 and item.country == "Korea"


def test_images_from_folder_are_stored_once_by_hash_with_thumbnails(researcher, annotators, tmp_path, media_root):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    records = valueground_records(tmp_path, n=2)
    records[1]["image_b"] = records[0]["image_a"]  # the same bytes twice
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert report.ok, report.errors
    assert Asset.objects.count() == 3 and report.images_stored == 3
    for asset in Asset.objects.all():
        assert (media_root / asset.relative_path()).is_file()
        assert not (media_root / asset.thumbnail_path()).exists()  # made on first request
    item = Item.objects.get(external_id="vg0")
    assert item.data["image_a"] == Asset.objects.get(items=item, sha256=item.data["image_a"]).sha256


def test_images_from_zip(researcher, annotators, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    records = valueground_records(tmp_path, n=1)
    zpath = tmp_path / "imgs.zip"
    zpath.write_bytes(
        zip_of({"pack/a0.png": (tmp_path / "a0.png").read_bytes(), "pack/b0.png": (tmp_path / "b0.png").read_bytes()})
    )
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=zpath)
    assert report.ok, report.errors


def _bad_import(project, data, fmt="jsonl", images=None):
    before = snapshot()
    report = importing.import_items(project=project, data=data, data_format=fmt, images=images)
    assert not report.ok
    assert snapshot() == before, "a failed import must write nothing"
    return report


def test_malformed_jsonl_line_is_reported_by_number_and_nothing_is_written(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators)
    data = jsonl(turing_records(3)) + "{not json\n" + jsonl(turing_records(1, start=10))
    report = _bad_import(project, data)
    assert report.errors == ["line 4: invalid JSON (Expecting property name enclosed in double quotes: column 2)"]


def test_unknown_and_missing_fields_are_reported_per_line(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators)
    records = turing_records(3)
    records[0]["colour"] = "red"
    del records[2]["model_utterance"]
    report = _bad_import(project, jsonl(records))
    assert report.errors[0].startswith("line 1: unknown field(s) for preset cqbench.turing: colour")
    assert report.errors[1] == "line 3: missing required field 'model_utterance'"


def test_wrong_types_duplicates_and_existing_ids(researcher, annotators):
    project = make_project("cqbench.story", owner=researcher, annotators=annotators)
    good = {"id": "s", "story": "x", "values": [{"statement": "a", "attitude": "b"}], "rewrites": []}
    report = _bad_import(
        project,
        jsonl(
            [
                good,
                dict(good, id="s"),
                dict(good, id="t", values="not a list"),
                dict(good, id="u", values=[{"statement": "a"}]),
                ["not", "an", "object"],
                dict(good, id="v", meta={"x": [1]}),
            ]
        ),
    )
    assert "line 2: duplicate id 's' (first on line 1)" in report.errors
    assert "line 3: field 'values': expected a list" in report.errors
    assert "line 4: field 'values': element 1 lacks text for attitude" in report.errors
    assert "line 5: each record must be a JSON object" in report.errors
    assert any(e.startswith("line 6: 'meta' must be") for e in report.errors)
    importing.import_items(project=project, data=jsonl([good]), data_format="jsonl")
    report = _bad_import(project, jsonl([dict(good, id="new"), good]))
    assert report.errors == ["line 2: an item with id 's' already exists in this project"]


def test_csv_problems_have_line_numbers(researcher, annotators):
    project = make_project("cqbench.story", owner=researcher, annotators=annotators)
    data = 'id,story,values,rewrites\ns1,ok,"[{""statement"":""a"",""attitude"":""b""}]",[]\ns2,ok,{bad json,[]\ns3,ok,[],[],extra\n'
    report = _bad_import(project, data, fmt="csv")
    assert "line 3: column 'values' must hold JSON (a list or an object)" in report.errors
    assert "line 4: the row has more cells than the header" in report.errors


@pytest.mark.parametrize("data", ["", "\n\n", "id\n"])
def test_empty_files_are_refused(researcher, annotators, data):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators)
    report = _bad_import(project, data, fmt="csv" if data.startswith("id") else "jsonl")
    assert report.errors


def test_non_utf8_is_refused(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators)
    report = _bad_import(project, b"\xff\xfe\x00garbage")
    assert "not UTF-8" in report.errors[0]


@pytest.mark.parametrize(
    "path, message",
    [
        ("../outside.png", "leaves the import folder"),
        ("/etc/passwd", "leaves the import folder"),
        ("sub/../../outside.png", "leaves the import folder"),
        ("C:/windows/x.png", "leaves the import folder"),
        ("missing.png", "not found"),
        ("https://example.org/a0.png", "image URLs are not supported; download the images and upload them as a .zip"),
        ("s3://bucket/a0.png", "image URLs are not supported"),
        ("data:image/png;base64,iVBORw0KGgo=", "image URLs are not supported"),
    ],
)
def test_image_paths_never_leave_the_import_root(researcher, annotators, tmp_path, path, message):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.png").write_bytes(png_bytes())
    records = valueground_records(root, n=1)
    records[0]["image_a"] = path
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    report = _bad_import(project, jsonl(records), images=root)
    assert any(message in e and e.startswith("line 1:") for e in report.errors), report.errors


def test_symlink_out_of_the_root_is_refused(researcher, annotators, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.png").write_bytes(png_bytes())
    records = valueground_records(root, n=1)
    (root / "link.png").symlink_to(tmp_path / "secret.png")
    records[0]["image_a"] = "link.png"
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    report = _bad_import(project, jsonl(records), images=root)
    assert "leaves the import folder" in report.errors[0]


def _one_bad_image(researcher, annotators, tmp_path, content: bytes, settings=None):
    records = valueground_records(tmp_path, n=1)
    (tmp_path / "a0.png").write_bytes(content)
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    return _bad_import(project, jsonl(records), images=tmp_path)


def test_a_text_file_named_png_is_not_an_image(researcher, annotators, tmp_path):
    report = _one_bad_image(researcher, annotators, tmp_path, b"<html><script>alert(1)</script></html>")
    assert "not a valid image" in report.errors[0]


def test_truncated_image_is_refused(researcher, annotators, tmp_path):
    report = _one_bad_image(researcher, annotators, tmp_path, png_bytes(size=(64, 64))[:60])
    assert "not a valid image" in report.errors[0]


def test_disallowed_format_is_refused(researcher, annotators, tmp_path):
    import io

    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, format="BMP")
    report = _one_bad_image(researcher, annotators, tmp_path, out.getvalue())
    assert "format BMP is not allowed" in report.errors[0]


def test_decompression_bomb_is_refused(researcher, annotators, tmp_path, settings):
    settings.HV_MAX_IMAGE_PIXELS = 10_000
    report = _one_bad_image(researcher, annotators, tmp_path, png_bytes(size=(200, 200)))
    assert "exceeds the limit" in report.errors[0]


def test_oversized_image_file_is_refused(researcher, annotators, tmp_path, settings):
    settings.HV_MAX_IMAGE_BYTES = 100
    report = _one_bad_image(researcher, annotators, tmp_path, png_bytes(size=(64, 64), color=(1, 2, 3)) + b"\0" * 200)
    assert "limit" in report.errors[0]


def test_zip_members_with_traversal_names_are_unreachable(researcher, annotators, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    records = valueground_records(tmp_path, n=1)
    zpath = tmp_path / "evil.zip"
    zpath.write_bytes(zip_of({"../a0.png": png_bytes(), "b0.png": png_bytes()}))
    report = _bad_import(project, jsonl(records), images=zpath)
    assert "not found in the zip" in report.errors[0]


def test_not_a_zip_is_refused(researcher, annotators, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    bad = tmp_path / "x.zip"
    bad.write_bytes(b"not a zip")
    report = _bad_import(project, jsonl(valueground_records(tmp_path, n=1)), images=bad)
    assert "not a readable zip" in report.errors[0]


def test_error_report_is_capped_but_counts_the_rest(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators)
    report = _bad_import(project, "{bad\n" * 250)
    assert len(report.errors) == 200 and report.errors_truncated == 50


def test_failed_write_removes_image_files_it_wrote(researcher, annotators, tmp_path, media_root, monkeypatch):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    records = valueground_records(tmp_path, n=1)

    def boom(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(importing, "assign_new_items", boom)
    before = snapshot()
    with pytest.raises(RuntimeError):
        importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert snapshot() == before
    assert not list((media_root / "assets").rglob("*.png"))


def test_import_command_reads_a_folder_and_reports_line_errors(researcher, annotators, tmp_path):
    from django.core.management import CommandError, call_command

    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators)
    data = tmp_path / "pairs.jsonl"
    data.write_text(jsonl(valueground_records(tmp_path, n=2)))
    call_command("import_items", str(project.id), str(data), "--images", str(tmp_path))
    assert Item.objects.filter(project=project).count() == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "z"}\n')
    before = snapshot()
    with pytest.raises(CommandError, match="line 1: missing required field 'question'"):
        call_command("import_items", str(project.id), str(bad), "--images", str(tmp_path))
    assert snapshot() == before
    with pytest.raises(CommandError, match="no project"):
        call_command("import_items", "9999", str(data))
