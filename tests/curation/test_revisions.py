"""The revision loop: needs-revision items exported with the raters' feedback (JSONL in the
import format), revised by a pipeline, re-imported as new versions linked to the original,
assigned and judged again under the same rubric."""

from __future__ import annotations

import json

import pytest

from annotation.models import Assignment, Item
from curation import services
from curation.exports import export_root, run_export_job
from curation.models import Export, ItemDecision
from tests.annotation.factories import png_bytes, zip_of

from .helpers import FAIL, PASS, REJECT, submit_all, valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:2], tmp_path / "img", n=3, k=2)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {items[0].id: [PASS, PASS], items[1].id: [PASS, FAIL], items[2].id: [REJECT, REJECT]}
    names = sorted(a.username for a in annotators[:2])
    submit_all(project, lambda item, rater: plan[item.id][names.index(rater.name)])
    services.apply_policy(project=project, user=researcher)
    project.items_in_order = items
    return project


def revision_export(project, user) -> list[dict]:
    export = run_export_job(
        export=Export.objects.create(project=project, created_by=user, content="revisions", format="jsonl", scope="all")
    )
    assert export.status == "done", export.message
    return [json.loads(line) for line in (export_root(export) / "revisions.jsonl").read_text().splitlines()]


def test_needs_revision_items_are_exported_with_feedback_in_the_import_format(project, researcher):
    records = revision_export(project, researcher)
    original = project.items_in_order[1]
    assert [r["id"] for r in records] == [original.external_id]
    rec = records[0]
    assert rec["question"] == original.data["question"]
    assert rec["image_a"] == "sha256:" + original.data["image_a"]
    assert rec["_revision"]["of_version"] == 1 and "revision requested" in rec["_revision"]["reason"]
    feedback = [r["feedback"] for r in rec["_revision"]["ratings"] if r["feedback"]]
    assert feedback == [{"feedback": "remove the flag in image B"}]
    assert all(r["rater"].startswith("r_") for r in rec["_revision"]["ratings"])


def test_revised_item_comes_back_as_a_new_version_and_is_assigned(project, researcher, tmp_path):
    rec = revision_export(project, researcher)[0]
    rec["image_b"] = "fixed_b.png"  # the generator replaced image B; image A unchanged (sha256 ref)
    rec["option_b"] = "Not at all (revised)"
    images = tmp_path / "revised.zip"
    images.write_bytes(zip_of({"fixed_b.png": png_bytes((1, 2, 3))}))
    report = services.import_revisions(project=project, data=json.dumps(rec) + "\n", images=images)
    assert report.ok, report.errors
    assert report.items_created == 1 and report.images_stored == 1 and report.assignments_created == 2
    original = project.items_in_order[1]
    v2 = Item.objects.get(project=project, external_id=original.external_id, version=2)
    assert v2.parent == original and v2.data["image_a"] == original.data["image_a"]
    assert v2.data["option_b"] == "Not at all (revised)" and v2.data["image_b"] != original.data["image_b"]
    assert v2.assets.count() == 2
    assert Assignment.objects.filter(item=v2, rater__kind="human").count() == 2
    # judged again under the same rubric: accepted this time
    submit_all(project, lambda item, rater: PASS if item.id == v2.id else None)
    services.apply_policy(project=project, user=researcher)
    assert ItemDecision.objects.get(item=v2).status == "accepted"
    # the original keeps its decision, but is no longer listed for revision
    assert ItemDecision.objects.get(item=original).status == "needs_revision"
    assert revision_export(project, researcher) == []


@pytest.mark.parametrize(
    "record, message",
    [
        (
            {
                "question": "q",
                "option_a": "a",
                "option_b": "b",
                "image_a": "sha256:" + "0" * 64,
                "image_b": "sha256:" + "0" * 64,
            },
            "needs the 'id'",
        ),
        (
            {
                "id": "nope",
                "question": "q",
                "option_a": "a",
                "option_b": "b",
                "image_a": "sha256:" + "0" * 64,
                "image_b": "sha256:" + "0" * 64,
            },
            "no item with id 'nope'",
        ),
        (
            {
                "id": "vg1",
                "question": "q",
                "option_a": "a",
                "option_b": "b",
                "image_a": "sha256:" + "0" * 64,
                "image_b": "sha256:" + "0" * 64,
            },
            "no stored image",
        ),
        ({"id": "vg1", "question": "q", "colour": "red"}, "unknown field(s)"),
    ],
)
def test_bad_revision_files_import_nothing(project, record, message):
    report = services.import_revisions(project=project, data=json.dumps(record) + "\n")
    assert not report.ok and any(message in e for e in report.errors), report.errors
    assert Item.objects.filter(project=project).count() == 3


def test_revisions_follow_the_projects_assignment_rules(project, researcher):
    """Revision re-import goes through the item importer: once assignment plans manage the
    project, a revised item is not handed to every annotator (the plan decides), exactly as a
    first import (this was a bug: revisions were assigned unconditionally)."""
    rec = revision_export(project, researcher)[0]
    project.options = {**project.options, "assignment": "plans"}
    project.save(update_fields=["options"])
    report = services.import_revisions(project=project, data=json.dumps(rec) + "\n")
    assert report.ok, report.errors
    assert report.items_created == 1 and report.assignments_created == 0
    v2 = Item.objects.get(project=project, external_id=rec["id"], version=2)
    assert not Assignment.objects.filter(item=v2).exists()


def test_revised_quality_control_items_are_never_handed_out(project, researcher):
    """An attention or gold item (``meta.qc``) is injected by quality control, never assigned,
    whether it arrives in a first import or as a revision."""
    rec = revision_export(project, researcher)[0]
    rec["meta"] = {"qc": "gold", "expected.q4": 1}
    report = services.import_revisions(project=project, data=json.dumps(rec) + "\n")
    assert report.ok, report.errors
    assert report.items_created == 1 and report.assignments_created == 0
    v2 = Item.objects.get(project=project, external_id=rec["id"], version=2)
    assert v2.meta["qc"] == "gold"
    assert not Assignment.objects.filter(item=v2).exists()


def test_a_revision_cannot_link_or_probe_another_projects_image(project, researcher, annotators, tmp_path):
    """Issue 12, finding 9: ``sha256:`` reuses only images of this project's own items; another
    project's image is answered exactly like a hash that does not exist (nothing is learnt)."""
    from annotation import importing
    from tests.annotation.factories import jsonl, make_project, make_user, valueground_records

    other = make_project("valueground.pair_quality", owner=make_user("other_res", researcher=True), annotators=[])
    folder = tmp_path / "other"
    folder.mkdir()
    records = valueground_records(folder, n=1)
    (folder / "a0.png").write_bytes(png_bytes((1, 2, 3)))  # an image only the other project has
    assert importing.import_items(project=other, data=jsonl(records), data_format="jsonl", images=folder).ok
    own = {i.data["image_a"] for i in Item.objects.filter(project=project)}
    [foreign] = [i.data["image_a"] for i in Item.objects.filter(project=other) if i.data["image_a"] not in own]
    rec = revision_export(project, researcher)[0]
    errors = {}
    for name, sha in (("foreign", foreign), ("missing", "f" * 64)):
        report = services.import_revisions(project=project, data=json.dumps({**rec, "image_a": f"sha256:{sha}"}) + "\n")
        assert not report.ok
        errors[name] = [e.replace(sha, "<sha>") for e in report.errors]
    assert errors["foreign"] == errors["missing"] and "no stored image" in errors["foreign"][0]
    assert not Item.objects.filter(project=project, version=2).exists()
