"""Label Studio's flat exports (JSON-MIN and CSV) imported as human ratings.

The fixtures were written by Label Studio's own converter (``label-studio-sdk`` 2.1.2,
``Converter(config).convert(tasks, out, "JSON_MIN" | "CSV", is_dir=False)``) from the full JSON
exports beside them (``labelstudio_valueground_qid.json`` with ``labelstudio_valueground_config.xml``;
``labelstudio_shapes.json`` with ``labelstudio_shapes_config.xml``), so the tests read the
converter's real output. Expected answers are written by hand from the full exports."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError

from annotation import importing
from annotation.models import Annotation, AnnotationImport, Rater
from annotation.sources import labelstudio_flat
from annotation.sources.common import ReadCounts
from tests.annotation import test_import_annotations as full_export
from tests.annotation.test_import_annotations import answers_of, imported_raters, nothing_written, run
from tests.curation.helpers import jsonl, make_project, valueground_records

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LS_FULL = FIXTURES / "labelstudio_valueground_qid.json"
LS_MIN = FIXTURES / "labelstudio_min_valueground.json"
LS_CSV = FIXTURES / "labelstudio_csv_valueground.csv"
SHAPES_MIN = FIXTURES / "labelstudio_min_shapes.json"
SHAPES_CSV = FIXTURES / "labelstudio_csv_shapes.csv"

#: ValueGround items vg0, vg1 with a data field ``question_id`` (Q27-0, Q27-1)
wvs_project = full_export.wvs_project

RATER2 = "email-sha256:" + hashlib.sha256(b"rater2@example.org").hexdigest()[:20]


def read(path: Path, item_key: str):
    problems: list[tuple[str, str]] = []
    counts = ReadCounts()
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        got = labelstudio_flat.read_json_min(
            text, item_key=item_key, problem=lambda w, m: problems.append((w, m)), counts=counts
        )
    else:
        got = labelstudio_flat.read_csv(
            io.StringIO(text, newline=""),
            item_key=item_key,
            problem=lambda w, m: problems.append((w, m)),
            counts=counts,
        )
    return got, problems, counts


@pytest.mark.parametrize("path", [SHAPES_MIN, SHAPES_CSV], ids=["json-min", "csv"])
def test_every_control_type_reads_back_as_in_the_full_export(path):
    got, problems, counts = read(path, "pair_id")
    assert problems == []
    assert counts.records == 3 and counts.skipped_empty == 1  # task 8: nobody annotated it
    first, second = got
    assert (first.key, first.rater, second.key, second.rater) == (
        "p1",
        "1",
        "p1",
        "email-sha256:" + hashlib.sha256(b"b@example.org").hexdigest()[:20],
    )
    # several choices, one choice, the labels of both regions, a number, a rating, two text lines
    assert first.answers == {
        "text": "Anna lives in Berlin",  # the task's data: the import leaves it out by name
        "flags": ["text", "flag"],
        "verdict": "keep",
        "spans": ["person", "place"],
        "count": 2,
        "stars": 4,
        "note": "two lines\nhere",
    }
    # one choice of a multiple-choice control is written as the bare choice
    assert second.answers == {
        "text": "Anna lives in Berlin",
        "flags": "ui",
        "verdict": "drop",
        "stars": 1,
        "note": "one line",
    }
    assert (first.duration_ms, second.duration_ms) == (12500, 3250)
    assert first.submitted_at.isoformat() == "2024-06-01T10:00:00+00:00"


def test_a_csv_cell_that_only_looks_like_json_stays_text():
    assert labelstudio_flat.decode_cell("[not json") == "[not json"
    assert labelstudio_flat.decode_cell('{"a": 1}') == '{"a": 1}'  # not a result's shape
    assert labelstudio_flat.decode_cell('[{"rating": 3}]') == 3
    assert labelstudio_flat.decode_cell("plain text") == "plain text"


#: the answers of the full export (labelstudio_valueground_qid.json), by hand: choices hold text,
#: the rating answers q3 (mapped), an option's label is its value, text lines are joined
EXPECTED = {
    ("1", "vg0"): {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": "Both images\nlook fine"},
    (RATER2, "vg0"): {"q1": 1, "q2": 1, "q3": 1, "q4": 0, "feedback": None},
    ("1", "vg1"): {"q1": 0, "q2": 2, "q3": 2, "q4": 1, "feedback": None},
    (RATER2, "vg1"): {"q1": 2, "q2": 2, "q3": 2, "q4": 1, "feedback": "ok"},
}


@pytest.mark.parametrize(
    ("path", "fmt", "key"),
    [
        (LS_MIN, "labelstudio-min", "question_id"),
        (LS_CSV, "labelstudio-csv", "id"),
        (LS_CSV, "labelstudio-csv", "question_id"),
    ],
    ids=["json-min", "csv-by-id", "csv-by-field"],
)
def test_a_flat_export_imports_the_same_ratings_as_the_full_export(wvs_project, path, fmt, key):
    out = run(wvs_project, path, fmt, "--item-key", key, "--map", "quality=q3")
    assert "imported 4 annotations" in out
    assert answers_of(wvs_project) == EXPECTED
    job = AnnotationImport.objects.get(project=wvs_project)
    assert job.data_format == fmt and job.mapping == {"quality": "q3"}
    # the task's data columns are shown as left out, the controls as mapped
    mapping = job.report["mapping"]
    assert {k: v for k, v in mapping.items() if v} == {
        "q1": "q1",
        "q2": "q2",
        "quality": "q3",
        "q4": "q4",
        "feedback": "feedback",
    }
    assert {"question", "option_a", "option_b", "image_a", "image_b"} <= {k for k, v in mapping.items() if v is None}
    first = Annotation.objects.get(rater__parameters__source_id="1", item__external_id="vg0")
    assert first.duration_ms == 42512
    assert first.assignment.submitted_at.isoformat().startswith("2024-05-02T09:15:03")
    # the e-mail is never stored, only its digest
    stored = json.dumps(list(Rater.objects.values_list("parameters", "attributes", "name")))
    assert "rater2@example.org" not in stored


def test_the_flat_and_the_full_export_agree(wvs_project, researcher, tmp_path):
    """Label Studio's full export keyed the same items: the same answers per item and rater."""
    run(wvs_project, LS_CSV, "labelstudio-csv", "--map", "quality=q3")
    flat = answers_of(wvs_project)
    other = make_project("valueground.pair_quality", owner=researcher, k=3)
    folder = tmp_path / "img2"
    folder.mkdir()
    records = valueground_records(folder, n=2)
    assert importing.import_items(project=other, data=jsonl(records), data_format="jsonl", images=folder).ok
    run(other, LS_FULL, "labelstudio", "--map", "quality=q3")
    full = answers_of(other)
    # the full export names rater 2 by its id, the flat export by its e-mail (digested)
    assert {(RATER2 if r == "2" else r, item): a for (r, item), a in full.items()} == flat


def test_json_min_keyed_by_id_finds_the_data_key_that_names_the_items(wvs_project):
    """JSON-MIN's ``id`` is the task id: with the default item key, the one data key naming the
    items (``question_id``; ``question`` names every item alike, so it names none) is used."""
    out = run(wvs_project, LS_MIN, "labelstudio-min", "--map", "quality=q3")
    assert "imported 4 annotations" in out
    assert AnnotationImport.objects.get(project=wvs_project).item_key == "question_id"


def test_json_min_keyed_by_id_explains_that_id_is_the_task_id(wvs_project, tmp_path):
    records = json.loads(LS_MIN.read_text(encoding="utf-8"))
    path = tmp_path / "no-question-id.json"
    path.write_text(json.dumps([{k: v for k, v in r.items() if k != "question_id"} for r in records]))
    with pytest.raises(CommandError) as exc:
        run(wvs_project, path, "labelstudio-min", "--map", "quality=q3")
    message = str(exc.value)
    assert "record #1 (id 41, annotation_id 102): unknown item: no item with external id '41'" in message
    assert "'id' is Label Studio's task id" in message
    assert nothing_written(wvs_project)


def test_an_answer_column_that_is_not_task_data_must_be_mapped(wvs_project):
    """Only columns named after a field of the items are left out on their own."""
    with pytest.raises(CommandError) as exc:
        run(wvs_project, LS_CSV, "labelstudio-csv")
    assert "unknown field 'quality'" in str(exc.value)
    assert nothing_written(wvs_project) and not imported_raters(wvs_project).exists()


def test_a_full_export_given_as_json_min_is_refused_with_the_format_to_use(wvs_project):
    with pytest.raises(CommandError) as exc:
        run(wvs_project, LS_FULL, "labelstudio-min", "--map", "quality=q3")
    message = str(exc.value)
    assert (
        "line 1: this is Label Studio's full JSON export (tasks with 'annotations'): choose the format "
        "Label Studio JSON export (labelstudio)" in message
    )
    assert nothing_written(wvs_project)


def test_a_csv_without_an_annotator_column_is_refused(wvs_project, tmp_path):
    path = tmp_path / "not-ls.csv"
    path.write_text("id,q1\nvg0,2\n", encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        run(wvs_project, path, "labelstudio-csv")
    assert "line 1: the header has no 'annotator' column" in str(exc.value)
    assert nothing_written(wvs_project)


def test_the_api_takes_a_label_studio_csv_for_the_projects_researchers_only(client, wvs_project, researcher):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from tests.annotation.factories import make_user

    url = reverse("api-project-annotation-imports", args=[wvs_project.id])

    def upload():
        return SimpleUploadedFile(LS_CSV.name, LS_CSV.read_bytes(), content_type="text/csv")

    data = {"format": "labelstudio-csv", "map": ["quality=q3"]}
    client.force_login(make_user("someone-else", researcher=True))
    assert client.post(url, {**data, "file": upload()}).status_code == 404
    client.force_login(researcher)
    body = client.post(url, {**data, "preview": "true", "file": upload()}).json()
    assert body["ok"] and body["annotations_read"] == 4 and body["mapping"]["question"] is None
    assert nothing_written(wvs_project)
    resp = client.post(url, {**data, "file": upload()})
    assert resp.status_code == 201, resp.content
    assert resp.json()["report"]["annotations_created"] == 4
    assert answers_of(wvs_project) == EXPECTED
