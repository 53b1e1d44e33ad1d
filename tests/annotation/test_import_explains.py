"""An import of ratings made in Label Studio that explains itself (issue 35): the item key matched
against the items' external ids first, detected from the file when the default names nothing, one
summary line for a wrong project or a key no task has, a preview that shows how values are read,
which annotators become which raters with their counts and sample rows, and web messages in the
page's words.

The exports are crafted here as Label Studio 1.x writes them (JSON: tasks with ``data`` and
``annotations``; JSON-MIN: one flat record per annotation, ``annotator`` and the data beside the
answers; CSV: the same as columns), keyed by the task data's ``pair_id``, three annotators."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation import annotation_import, importing
from annotation.models import Annotation, AnnotationImport
from tests.annotation.factories import jsonl, make_project, make_user, valueground_records

pytestmark = pytest.mark.django_db

Q4_YES = "No obvious explicit cue is present."
#: answers per (annotator, task): q1..q3 as Label Studio choices ("2"), q4 as its option's label
ANSWERS = {
    (1, 0): ("2", "1", "2", Q4_YES),
    (2, 0): ("1", "1", "2", Q4_YES),
    (3, 0): ("2", "2", "1", Q4_YES),
    (1, 1): ("0", "1", "2", Q4_YES),
    (2, 1): ("1", "0", "0", Q4_YES),
    (3, 1): ("2", "2", "2", Q4_YES),
}
PAIR_IDS = ("pair-A", "pair-B")


def full_export() -> list[dict]:
    """Label Studio's JSON export: two tasks keyed by ``pair_id``, three annotators each."""
    tasks = []
    for t, pair in enumerate(PAIR_IDS):
        annotations = []
        for who in (1, 2, 3):
            q1, q2, q3, q4 = ANSWERS[(who, t)]
            annotations.append(
                {
                    "id": 100 + 10 * t + who,
                    "completed_by": who,
                    "was_cancelled": False,
                    "lead_time": 12.5,
                    "created_at": "2025-03-01T10:00:00Z",
                    "result": [
                        {"from_name": name, "to_name": "image_a", "type": "choices", "value": {"choices": [v]}}
                        for name, v in (("q1", q1), ("q2", q2), ("q3", q3), ("q4", q4))
                    ],
                }
            )
        tasks.append(
            {
                "id": 900 + t,
                "data": {"pair_id": pair, "image_a": f"/data/upload/a{t}.png", "question": "family?"},
                "annotations": annotations,
            }
        )
    return tasks


def min_records() -> list[dict]:
    """Label Studio's JSON-MIN export of the same tasks: one record per annotation."""
    out = []
    for task in full_export():
        for ann in task["annotations"]:
            answers = {r["from_name"]: r["value"]["choices"][0] for r in ann["result"]}
            out.append(
                {
                    **task["data"],
                    "id": task["id"],
                    **answers,
                    "annotator": ann["completed_by"],
                    "annotation_id": ann["id"],
                    "created_at": ann["created_at"],
                    "updated_at": ann["created_at"],
                    "lead_time": ann["lead_time"],
                }
            )
    return out


def csv_export() -> str:
    records = min_records()
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]))
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def items_project(researcher, folder: Path, *, external_ids: bool):
    """ValueGround items for the two pairs: their external id is the pair id (``external_ids``),
    or the pair id is the meta key ``pair_id`` beside an external id of their own."""
    project = make_project("valueground.pair_quality", owner=researcher, k=4)
    folder.mkdir(parents=True, exist_ok=True)
    records = valueground_records(folder, n=2)
    for record, pair in zip(records, PAIR_IDS, strict=True):
        if external_ids:
            record["id"] = pair
        else:
            record["meta"] = {"pair_id": pair}
    assert importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=folder).ok
    return project


@pytest.fixture
def by_id(researcher, tmp_path):
    return items_project(researcher, tmp_path / "img", external_ids=True)


@pytest.fixture
def by_field(researcher, tmp_path):
    return items_project(researcher, tmp_path / "img", external_ids=False)


def check(project, data: str | bytes, fmt: str = "labelstudio", item_key: str = "id", mapping=None):
    return annotation_import.check_annotations(
        project=project, data=data, data_format=fmt, item_key=item_key, mapping=mapping or {}
    ).report


def stored(project) -> dict[tuple[str, str], dict]:
    return {
        (a.rater.parameters["source_id"], a.item.external_id): {k: a.answers[k] for k in ("q1", "q2", "q3", "q4")}
        for a in Annotation.objects.filter(item__project=project).select_related("rater", "item")
    }


def expected(external: dict[int, str]) -> dict[tuple[str, str], dict]:
    return {
        (str(who), external[t]): {"q1": int(a[0]), "q2": int(a[1]), "q3": int(a[2]), "q4": 1}
        for (who, t), a in ANSWERS.items()
    }


# ------------------------------------------------------------------------------- matching
def test_the_item_key_is_matched_against_external_ids_first(by_id):
    """Items imported with id = the task's pair_id: --item-key pair_id matches them."""
    report = check(by_id, json.dumps(full_export()), item_key="pair_id")
    assert report.ok, report.errors
    assert report.items_matched == 2 and not report.item_key_detected


def test_the_item_key_falls_back_to_a_field_of_the_items(by_field):
    report = check(by_field, json.dumps(full_export()), item_key="pair_id")
    assert report.ok, report.errors
    assert report.items_matched == 2


def test_an_external_id_wins_over_another_items_field(by_field, researcher):
    """A key that is one item's external id and another item's pair_id names the first."""
    from annotation.models import Item

    vg0 = Item.objects.get(project=by_field, meta__pair_id="pair-A")
    other = Item.objects.get(project=by_field, meta__pair_id="pair-B")
    Item.objects.filter(pk=other.pk).update(external_id="pair-A-other")
    Item.objects.filter(pk=vg0.pk).update(external_id="pair-B")  # vg0's external id is the other pair's key
    found, several = annotation_import.items_by_key(by_field, "pair_id", {"pair-A", "pair-B"})
    assert found["pair-B"].id == vg0.pk  # by external id, not by other's pair_id field
    assert found["pair-A"].id == vg0.pk and several == {}


@pytest.mark.parametrize(
    "fmt,data",
    [
        ("labelstudio", lambda: json.dumps(full_export())),
        ("labelstudio-min", lambda: json.dumps(min_records())),
        ("labelstudio-csv", csv_export),
    ],
    ids=["json", "json-min", "csv"],
)
@pytest.mark.parametrize("fixture", ["by_id", "by_field"])
def test_the_default_item_key_is_detected_from_the_file_and_imported(fixture, fmt, data, request, tmp_path):
    project = request.getfixturevalue(fixture)
    report = check(project, data(), fmt)
    assert report.ok, report.errors
    assert report.item_key == "pair_id" and report.item_key_detected
    assert report.items_matched == 2 and report.annotations_read == 6 and report.raters == 3
    path = tmp_path / f"export.{'csv' if fmt.endswith('csv') else 'json'}"
    path.write_text(data(), encoding="utf-8")
    out = io.StringIO()
    call_command("import_annotations", str(project.id), str(path), "--format", fmt, stdout=out)
    assert "imported 6 annotations" in out.getvalue()
    assert AnnotationImport.objects.get(project=project).item_key == "pair_id"  # what was used, kept
    external = {0: "pair-A", 1: "pair-B"} if fixture == "by_id" else {0: "vg0", 1: "vg1"}
    assert stored(project) == expected(external)


def test_no_key_names_items_lists_the_keys_the_tasks_have_once(by_id, tmp_path):
    """A file whose tasks' data have no `id` and no key naming an item: one line, not one per task,
    naming the keys there are; and no false "questions no field answers"."""
    tasks = full_export()
    for task in tasks:
        task["data"]["pair_id"] = "nothing-" + task["data"]["pair_id"]
    report = check(by_id, json.dumps(tasks))
    assert not report.ok
    assert report.errors == [
        "item key: 2 of 2 tasks have no 'id' in their data (the item key); the keys the tasks have: "
        "image_a, pair_id, question: choose one of them as the item key"
    ]
    assert report.data_keys == ["image_a", "pair_id", "question"]
    assert report.questions_unanswered == []
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("import_annotations", str(by_id.id), str(path), "--format", "labelstudio")
    assert str(exc.value).count("have no 'id'") == 1 and "--item-key KEY" in str(exc.value)


def test_a_flat_export_without_the_key_is_said_once_per_file(by_id):
    records = [{k: v for k, v in r.items() if k != "id"} for r in min_records()]
    for r in records:
        r["pair_id"] = "none-" + r["pair_id"]
    report = check(by_id, json.dumps(records), "labelstudio-min")
    assert report.errors == [
        "item key: 6 of 6 records have no 'id' in their data (the item key); the keys the records have: "
        "image_a, pair_id, q1, q2, q3, q4, question: choose one of them as the item key"
    ]


def test_an_explicit_item_key_is_not_replaced(by_id):
    report = check(by_id, json.dumps(full_export()), item_key="question")
    assert not report.ok and not report.item_key_detected and report.item_key == "question"
    assert report.errors[0].startswith("file: 0 of 1 tasks match an item of this project (by external id or question)")


def test_a_file_for_another_project_gets_one_summary_line_first(by_id, researcher, tmp_path):
    other = items_project(researcher, tmp_path / "other", external_ids=True)
    from annotation.models import Item

    Item.objects.filter(project=other).update(meta={})
    tasks = full_export()
    for task in tasks:
        task["data"]["pair_id"] = "elsewhere-" + task["data"]["pair_id"]
    report = check(by_id, json.dumps(tasks), item_key="pair_id")
    assert not report.ok
    assert report.errors[0] == (
        "file: 0 of 2 tasks match an item of this project (by external id or pair_id): "
        "is this the project the file was exported for?"
    )
    assert len(report.errors) == 1 + 6  # then each annotation's line
    assert all("unknown item" in e for e in report.errors[1:])


# ------------------------------------------------------------------------------- the preview
def test_the_preview_shows_values_raters_and_sample_rows(by_id):
    report = check(by_id, json.dumps(full_export()))
    assert report.ok, report.errors
    # how values are read: Label Studio's choice text -> the rubric's value (and its label)
    assert report.value_examples["q4"] == [[Q4_YES, "1", Q4_YES]]
    assert [raw for raw, _v, _l in report.value_examples["q1"]] == ["2", "1", "0"]
    assert [v for _r, v, _l in report.value_examples["q1"]] == ["2", "1", "0"]
    assert report.value_examples["q1"][0][2].startswith("Image A is both distinguishable")
    # which source annotators become which raters, with how many annotations each brings
    assert report.rater_plan == [
        {"source": "1", "rater": "imported-1", "new": True, "annotations": 2},
        {"source": "2", "rater": "imported-2", "new": True, "annotations": 2},
        {"source": "3", "rater": "imported-3", "new": True, "annotations": 2},
    ]
    assert [(r["where"], r["item"], r["rater"]) for r in report.sample_rows] == [
        ("task 900, annotation 101", "pair-A", "1"),
        ("task 900, annotation 102", "pair-A", "2"),
        ("task 900, annotation 103", "pair-A", "3"),
    ]
    assert report.sample_rows[0]["answers"] == {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": None}


def test_the_rater_plan_names_the_raters_a_write_creates(by_id, tmp_path):
    path = tmp_path / "first.json"
    path.write_text(json.dumps(full_export()[:1]), encoding="utf-8")
    call_command("import_annotations", str(by_id.id), str(path), "--format", "labelstudio", stdout=io.StringIO())
    tasks = full_export()[1:]
    tasks[0]["annotations"].append({**tasks[0]["annotations"][0], "id": 199, "completed_by": 4})
    report = check(by_id, json.dumps(tasks))
    assert report.ok, report.errors
    names = {r["source"]: (r["rater"], r["new"], r["annotations"]) for r in report.rater_plan}
    assert names == {
        "1": ("imported-1", False, 1),
        "2": ("imported-2", False, 1),
        "3": ("imported-3", False, 1),
        "4": ("imported-4", True, 1),
    }
    path = tmp_path / "second.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    call_command("import_annotations", str(by_id.id), str(path), "--format", "labelstudio", stdout=io.StringIO())
    written = Annotation.objects.filter(item__project=by_id, item__external_id="pair-B", rater__name="imported-4")
    assert written.get().rater.parameters["source_id"] == "4"


# ------------------------------------------------------------------------------- the page
def upload(text: str, name: str = "export.json"):
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="application/json")


def test_the_page_preview_explains_the_import_in_web_words(client, by_id, researcher):
    from annotation import projects

    annotator = make_user("ann-explain")
    projects.add_member(project=by_id, user=annotator, role="annotator")
    preview = reverse("annotation_import_preview", args=[by_id.id])
    tasks = full_export()
    for task in tasks:
        for ann in task["annotations"]:
            ann["result"][0]["from_name"] = "match_a"  # a control the rubric does not name
    form = {"format": "labelstudio", "item_key": "id", "mapping": "", "file": upload(json.dumps(tasks))}
    client.force_login(annotator)
    assert client.post(preview, form).status_code == 403
    client.force_login(researcher)
    resp = client.post(preview, {**form, "file": upload(json.dumps(tasks))})
    assert resp.status_code == 200
    page = resp.content.decode()
    assert "unknown field &#x27;match_a&#x27;" in page and "match_a=QUESTION" in page
    assert "--map" not in page and "--item-key" not in page
    token = resp.context["staged"]["token"]
    assert resp.context["staged"]["item_key"] == "pair_id"  # the detected key goes on to the confirm
    resp = client.post(
        preview, {"format": "labelstudio", "item_key": "pair_id", "mapping": "match_a=q1", "token": token}
    )
    page = resp.content.decode()
    assert resp.status_code == 200 and resp.context["report"].ok
    assert 'data-testid="import-raters"' in page and "imported-3" in page
    assert page.count("<tr><td><code>task 900, annotation") == 3  # the three sample rows
    assert "<code>No obvious explicit cue is present.</code> → <code>1</code>" in page
    assert not Annotation.objects.filter(item__project=by_id).exists()


def test_the_preview_page_lists_the_tasks_keys_when_none_names_an_item(client, by_id, researcher):
    tasks = full_export()
    for task in tasks:
        task["data"]["pair_id"] = "x-" + task["data"]["pair_id"]
    client.force_login(researcher)
    resp = client.post(
        reverse("annotation_import_preview", args=[by_id.id]),
        {"format": "labelstudio", "item_key": "id", "mapping": "", "file": upload(json.dumps(tasks))},
    )
    page = resp.content.decode()
    assert resp.status_code == 200 and not resp.context["report"].ok
    assert 'data-testid="import-data-keys"' in page and "<code>pair_id</code>" in page
    assert page.count("tasks have no &#x27;id&#x27;") == 1


def test_the_command_dry_run_says_the_detected_key_and_the_raters(by_id, tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(full_export()), encoding="utf-8")
    out = io.StringIO()
    call_command("import_annotations", str(by_id.id), str(path), "--format", "labelstudio", "--dry-run", stdout=out)
    text = out.getvalue()
    assert "item key: pair_id (detected from the file" in text
    assert "1 -> imported-1 (new): 2, 2 -> imported-2 (new): 2, 3 -> imported-3 (new): 2" in text
    assert not Annotation.objects.filter(item__project=by_id).exists()


def test_the_api_preview_carries_the_explanation_for_the_projects_researchers_only(client, by_id, researcher):
    from annotation import projects

    annotator = make_user("ann-api-explain")
    projects.add_member(project=by_id, user=annotator, role="annotator")
    url = reverse("api-project-annotation-imports", args=[by_id.id])
    data = {"format": "labelstudio", "preview": "true"}
    assert client.post(url, {**data, "file": upload(json.dumps(full_export()))}).status_code in (401, 403)
    client.force_login(annotator)
    assert client.post(url, {**data, "file": upload(json.dumps(full_export()))}).status_code == 403
    client.force_login(researcher)
    resp = client.post(url, {**data, "file": upload(json.dumps(full_export()))})
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["item_key"] == "pair_id" and body["item_key_detected"]
    assert [r["annotations"] for r in body["rater_plan"]] == [2, 2, 2]
    assert len(body["sample_rows"]) == 3 and body["value_examples"]["q4"] == [[Q4_YES, "1", Q4_YES]]
    assert not Annotation.objects.filter(item__project=by_id).exists()
