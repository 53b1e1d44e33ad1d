"""Importing human annotations collected elsewhere (issue 26): Label Studio JSON exports, long CSV /
JSONL and wide CSV, all or nothing with every problem by task id or line, idempotent, stored as
HV's own ratings (so reports, exports and verdicts read them alike), through the command, the API
and the project page, for the project's researchers only."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation import annotation_import, importing, staging
from annotation.models import Annotation, AnnotationImport, Assignment, Item, Rater
from tests.annotation.factories import jsonl, make_project, make_user, valueground_records
from tests.curation.helpers import valueground_project

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LS = FIXTURES / "labelstudio_valueground.json"
LS_REFUSED = FIXTURES / "labelstudio_refused.json"
LONG_CSV = FIXTURES / "long_valueground.csv"
LONG_JSONL = FIXTURES / "long_valueground.jsonl"
WIDE = FIXTURES / "wide_valueground.csv"


@pytest.fixture
def project(researcher, tmp_path):
    return valueground_project(researcher, [], tmp_path / "img", n=4, k=3)


@pytest.fixture
def annotator(db):
    return make_user("ann1")


def imported_raters(project):
    return Rater.objects.filter(backend="imported", kind="human", parameters__project=project.id)


def nothing_written(project):
    return not imported_raters(project).exists() and not Annotation.objects.filter(item__project=project).exists()


def run(project, path, fmt, *args):
    out = io.StringIO()
    call_command("import_annotations", str(project.id), str(path), "--format", fmt, *args, stdout=out)
    return out.getvalue()


def answers_of(project):
    """{(source id, external id): answers} of the imported ratings."""
    return {
        (a.rater.parameters["source_id"], a.item.external_id): a.answers
        for a in Annotation.objects.filter(item__project=project).select_related("rater", "item")
    }


# ------------------------------------------------------------------------------- Label Studio
def test_a_label_studio_export_is_imported_as_pseudonymous_raters(project):
    out = run(project, LS, "labelstudio", "--map", "quality=q3")
    assert "imported 4 annotations" in out and "1 cancelled skipped" in out
    raters = list(imported_raters(project).order_by("id"))
    assert [r.parameters["source_id"] for r in raters] == ["1", "2"]
    assert all(r.user_id is None and r.kind == "human" for r in raters)
    assert [r.name for r in raters] == ["imported-1", "imported-2"]  # pseudonyms, not the source ids
    assert "rater2@example.org" not in json.dumps([r.parameters for r in raters] + [r.attributes for r in raters])
    got = answers_of(project)
    # "2" -> 2 (choices hold text), the rating -> q3, an option's label -> its value, text lines joined
    assert got[("1", "vg0")] == {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": "Both images\nlook fine"}
    assert got[("2", "vg0")] == {"q1": 1, "q2": 1, "q3": 1, "q4": 0, "feedback": None}
    assert set(got) == {("1", "vg0"), ("2", "vg0"), ("1", "vg1"), ("2", "vg1")}  # rater 3's was cancelled
    job = AnnotationImport.objects.get(project=project)
    assert job.status == "done" and job.data_format == "labelstudio" and job.mapping == {"quality": "q3"}
    assert job.sha256 == hashlib.sha256(LS.read_bytes()).hexdigest()
    first = Annotation.objects.get(rater=raters[0], item__external_id="vg0")
    assert first.duration_ms == 42512 and first.source_import_id == job.id  # lead_time kept as time on task
    assert first.derived["accepted"] is not None  # derived with the rubric, as a browser submission
    a = first.assignment
    assert a.status == Assignment.Status.SUBMITTED and a.purpose == Assignment.Purpose.REGULAR
    assert a.submitted_at.isoformat().startswith("2024-05-02T09:15:03")
    assert job.report["mapping"] == {"q1": "q1", "q2": "q2", "quality": "q3", "q4": "q4", "feedback": "feedback"}
    assert job.report["skipped_cancelled"] == 1 and job.report["raters_new"] == 2


def test_a_refused_label_studio_export_lists_every_problem_by_task_and_writes_nothing(project):
    with pytest.raises(CommandError) as exc:
        run(project, LS_REFUSED, "labelstudio", "--map", "quality=q3")
    message = str(exc.value)
    assert "task 41, annotation 101: question 'q1' (item 'vg0'): '7' is not one of 0, 1, 2" in message
    assert "task 41, annotation 102: question 'q4' (item 'vg0'): an answer is required" in message
    assert "task 42, annotation 104: unknown item: no item with external id 'vg-missing'" in message
    assert "task 43, annotation 106: duplicate: rater '1' already rated item 'vg0' (task 41, annotation 101)" in message
    assert nothing_written(project)
    job = AnnotationImport.objects.get(project=project)
    assert job.status == "failed" and len(job.report["errors"]) == 5  # the 4 above and task 42's second rater
    assert job.sha256 == hashlib.sha256(LS_REFUSED.read_bytes()).hexdigest()


def test_an_unmapped_field_is_refused_with_the_mapping_to_give(project):
    with pytest.raises(CommandError) as exc:
        run(project, LS, "labelstudio")
    assert "task 41, annotation 101: unknown field 'quality'" in str(exc.value)
    assert "map it as quality=QUESTION, or quality= to leave it out" in str(exc.value)
    assert "--map quality=QUESTION" in str(exc.value)  # the command says it in its own options
    assert nothing_written(project)
    with pytest.raises(CommandError) as exc:
        run(project, LS, "labelstudio", "--map", "quality=nope")
    assert "the mapping quality=nope names no rubric question" in str(exc.value)


def test_importing_the_same_file_twice_adds_nothing(project):
    run(project, LS, "labelstudio", "--map", "quality=q3")
    before = Annotation.objects.count(), Rater.objects.count(), Assignment.objects.count()
    out = run(project, LS, "labelstudio", "--map", "quality=q3")
    assert "already imported" in out
    assert (Annotation.objects.count(), Rater.objects.count(), Assignment.objects.count()) == before
    # the same ratings in another file (reordered) add nothing either; a changed answer is refused
    tasks = json.loads(LS.read_text())
    tasks.reverse()
    again = project_file(tasks)
    report = annotation_import.check_annotations(
        project=project, data=again, data_format="labelstudio", mapping={"quality": "q3"}
    ).report
    assert report.ok and report.already_imported == 4 and report.duplicate_of is None
    run(project, again, "labelstudio", "--map", "quality=q3")
    assert (Annotation.objects.count(), Rater.objects.count(), Assignment.objects.count()) == before
    tasks[1]["annotations"][0]["result"][0]["value"]["choices"] = ["0"]
    with pytest.raises(CommandError) as exc:
        run(project, project_file(tasks), "labelstudio", "--map", "quality=q3")
    assert "task 41, annotation 101: rater '1' already has a different answer for item 'vg0'" in str(exc.value)


def project_file(tasks) -> Path:
    path = Path(staging.staging_root().parent) / f"ls-{hashlib.sha1(json.dumps(tasks).encode()).hexdigest()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(tasks))
    return path


def test_a_dry_run_shows_the_mapping_and_counts_and_writes_nothing(project):
    out = run(project, LS, "labelstudio", "--map", "quality=q3", "--dry-run")
    assert "quality -> q3" in out and "dry run, nothing written" in out and "would create 4 annotations" in out
    assert nothing_written(project) and not AnnotationImport.objects.exists()


# ------------------------------------------------------------------------------- long and wide
def test_a_long_csv_with_rater_attributes_and_times(project):
    out = run(project, LONG_CSV, "csv")
    assert "imported 4 annotations" in out
    got = answers_of(project)
    assert got[("p1", "vg0")] == {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": None}
    assert got[("p2", "vg0")]["feedback"] == "a flag, top left"
    p1, p2 = imported_raters(project).order_by("id")
    assert p1.attributes == {"nationality": "China"} and p2.attributes == {"nationality": "Germany"}
    a = Annotation.objects.get(rater=p1, item__external_id="vg0")
    assert a.duration_ms == 41000 and a.assignment.submitted_at.isoformat().startswith("2024-05-03T10:00:00")
    assert Annotation.objects.get(rater=p2, item__external_id="vg0").duration_ms is None


def test_a_long_jsonl_and_then_a_csv_of_the_same_raters(project, tmp_path):
    out = run(project, LONG_JSONL, "jsonl")
    assert "imported 2 annotations" in out
    got = answers_of(project)
    assert got[("p1", "vg1")] == {"q1": 0, "q2": 2, "q3": 2, "q4": 1, "feedback": "fine"}
    assert Annotation.objects.get(item__external_id="vg0").duration_ms == 41000  # lead_time in seconds
    # the CSV gives p1's vg1 without the feedback: a different answer for a stored pair is refused
    with pytest.raises(CommandError) as exc:
        run(project, LONG_CSV, "csv")
    assert "line 11: rater 'p1' already has a different answer for item 'vg1'" in str(exc.value)
    # without those lines: p1's vg0 is already there (counted, not written again), p2 is new
    lines = [line for line in LONG_CSV.read_text().splitlines() if not line.startswith("vg1,p1")]
    path = tmp_path / "rest.csv"
    path.write_text("\n".join(lines) + "\n")
    out = run(project, path, "csv")
    assert "imported 2 annotations" in out and "1 already imported" in out
    assert imported_raters(project).count() == 2  # p1 is the same rater in both files
    assert Annotation.objects.filter(item__project=project).count() == 4


def test_a_long_csv_refusal_names_each_line(project, tmp_path):
    text = LONG_CSV.read_text().splitlines()  # text[n] is line n + 1
    text[1] = text[1].replace("vg0,p1,q1,2", "vg0,p1,q1,5")  # line 2: an option outside the rubric
    text[10] = text[10].replace("vg1,p1,q1,0", "vg9,p1,q1,0")  # line 11: an unknown item
    text[16] = text[16].replace("vg1,p2,q3,2", "vg1,p2,q4,0")  # line 17: q4 (again on line 18), no q3
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(CommandError) as exc:
        run(project, path, "csv")
    message = str(exc.value)
    assert "line 2: question 'q1' (item 'vg0'): '5' is not one of 0, 1, 2" in message
    assert "line 11: unknown item: no item with external id 'vg9'" in message
    assert "line 18: duplicate answer: rater 'p2' already answered 'q4' for item 'vg1' on line 17" in message
    assert "line 15: question 'q3' (item 'vg1'): an answer is required" in message  # the pair's first line
    assert "line 12: question 'q1' (item 'vg1'): an answer is required" in message
    assert nothing_written(project)


@pytest.fixture
def wvs_project(researcher, tmp_path):
    """ValueGround items keyed by a field of their data (``question_id``) as well as their id."""
    project = make_project("valueground.pair_quality", owner=researcher, k=3)
    folder = tmp_path / "img"
    folder.mkdir()
    records = [{**r, "question_id": f"Q27-{i}"} for i, r in enumerate(valueground_records(folder, n=2))]
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=folder)
    assert report.ok, report.errors
    return project


def test_a_wide_csv_matched_by_a_field_of_the_items(wvs_project):
    project = wvs_project
    with pytest.raises(CommandError) as exc:
        run(project, WIDE, "wide", "--item-key", "question_id")
    assert "line 2: unknown field 'StartDate'" in str(exc.value)
    out = run(project, WIDE, "wide", "--item-key", "question_id", "--map", "Q1_match_a=q1", "--map", "StartDate=")
    assert "imported 3 annotations" in out
    got = answers_of(project)
    assert got[("w1", "vg0")] == {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": None}
    assert got[("w2", "vg0")] == {"q1": 0, "q2": 0, "q3": 1, "q4": 0, "feedback": "text in image B"}
    w1 = imported_raters(project).get(parameters__source_id="w1")
    assert w1.attributes == {"nationality": "India"}
    assert Annotation.objects.get(rater=w1, item__external_id="vg0").duration_ms == 35500
    job = AnnotationImport.objects.filter(status="done").get()
    assert job.item_key == "question_id" and job.mapping == {"Q1_match_a": "q1", "StartDate": ""}
    assert job.report["mapping"]["StartDate"] is None


def test_items_of_another_project_are_unknown(project, researcher, tmp_path):
    other = valueground_project(researcher, [], tmp_path / "img2", n=1, k=1)
    Item.objects.filter(project=other).update(external_id="vg-other")
    report = annotation_import.check_annotations(
        project=project,
        data=b"item,rater,field,value\nvg-other,p1,q1,1\n",
        data_format="csv",
    ).report
    assert not report.ok and report.errors[0] == (
        "file: 0 of 1 item keys match an item of this project (by external id): "
        "is this the project the file was exported for?"
    )
    assert report.errors[1].startswith("line 2: unknown item")


# ------------------------------------------------------------------------------- API and page
def ls_upload(path=LS):
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/json")


def test_the_api_previews_then_imports_for_the_projects_researchers_only(client, project, researcher, annotator):
    from annotation import projects

    projects.add_member(project=project, user=annotator, role="annotator")
    url = reverse("api-project-annotation-imports", args=[project.id])
    data = {"format": "labelstudio", "map": ["quality=q3"]}
    assert client.post(url, {**data, "file": ls_upload()}).status_code in (401, 403)
    client.force_login(annotator)
    assert client.post(url, {**data, "file": ls_upload()}).status_code == 403
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.post(url, {**data, "file": ls_upload()}).status_code == 404
    assert nothing_written(project) and not AnnotationImport.objects.exists()

    client.force_login(researcher)
    resp = client.post(url, {**data, "preview": "true", "file": ls_upload()})
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["preview"] and body["ok"] and body["mapping"]["quality"] == "q3"
    assert body["annotations_read"] == 4 and body["skipped_cancelled"] == 1 and body["raters_new"] == 2
    assert nothing_written(project) and not AnnotationImport.objects.exists()
    assert not any(staging.staging_root().iterdir())  # the preview's upload is not kept

    resp = client.post(url, {**data, "file": ls_upload()})
    assert resp.status_code == 201, resp.content
    job = resp.json()
    assert job["status"] == "done" and job["report"]["annotations_created"] == 4
    assert job["source"] == f"imported:{job['id']}" and job["sha256"] == hashlib.sha256(LS.read_bytes()).hexdigest()
    got = client.get(reverse("api-annotation-import-detail", args=[job["id"]]))
    assert got.status_code == 200 and got.json()["mapping"] == {"quality": "q3"}
    client.force_login(annotator)
    assert client.get(reverse("api-annotation-import-detail", args=[job["id"]])).status_code == 404

    client.force_login(researcher)
    resp = client.post(url, {**data, "file": ls_upload(LS_REFUSED)})
    assert resp.status_code == 400
    errors = resp.json()["report"]["errors"]
    assert "task 42, annotation 104: unknown item: no item with external id 'vg-missing' in this project" in errors
    assert Annotation.objects.filter(item__project=project).count() == 4


def test_the_page_uploads_previews_and_confirms(client, project, researcher, annotator):
    from annotation import projects

    projects.add_member(project=project, user=annotator, role="annotator")
    page = reverse("annotation_imports", args=[project.id])
    preview = reverse("annotation_import_preview", args=[project.id])
    form = {"format": "labelstudio", "item_key": "id", "mapping": "quality=q3"}
    client.force_login(annotator)
    assert client.get(page).status_code == 403
    assert client.post(preview, {**form, "file": ls_upload()}).status_code == 403
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.get(page).status_code == 404
    assert client.post(preview, {**form, "file": ls_upload()}).status_code == 404

    client.force_login(researcher)
    assert client.get(reverse("project_detail", args=[project.id])).content.count(page.encode()) == 1
    assert client.get(page).status_code == 200
    # without the mapping: the preview names the unknown field; the mapping edited on the preview page
    resp = client.post(preview, {**form, "mapping": "", "file": ls_upload()})
    assert resp.status_code == 200 and b"unknown field &#x27;quality&#x27;" in resp.content
    token = resp.context["staged"]["token"]
    resp = client.post(preview, {**form, "token": token})
    assert resp.status_code == 200 and resp.context["report"].ok
    assert b"annotations 4" in resp.content and nothing_written(project)
    # another user cannot confirm this upload
    client.force_login(make_user("r2", researcher=True))
    confirm = reverse("annotation_import_confirm", args=[project.id])
    assert client.post(confirm, {**form, "token": token}).status_code == 404
    client.force_login(researcher)
    resp = client.post(confirm, {**form, "token": token})
    job = AnnotationImport.objects.get(project=project)
    assert resp.status_code == 302 and resp["Location"] == reverse("annotation_import_detail", args=[job.id])
    detail = client.get(resp["Location"])
    assert (
        detail.status_code == 200
        and b"annotations 4" in detail.content
        and f"imported:{job.id}".encode() in detail.content
    )
    assert Annotation.objects.filter(item__project=project, source_import=job).count() == 4
    client.force_login(annotator)
    assert client.get(resp["Location"]).status_code == 403


# ------------------------------------------------------------------------------- the same file at once
def queued_import(project, path: Path) -> AnnotationImport:
    return AnnotationImport.objects.create(
        project=project, data_file=str(path), data_format="labelstudio", mapping={"quality": "q3"}
    )


def test_an_import_that_checked_before_another_wrote_the_same_file_writes_nothing(project, tmp_path, monkeypatch):
    """Issue 37 (H1), interleaved by hand: job A checks the file (no import of it is done yet),
    job B checks and writes it, then A goes on to write. A must write nothing and end done as B's
    duplicate; the check before the write alone let both write (8 annotations, 4 raters)."""
    a, b = (queued_import(project, shutil.copy(LS, tmp_path / f"{n}.json")) for n in "ab")
    real_write = annotation_import.write_plan

    def b_writes_first(plan, **kwargs):
        if kwargs["job"].pk == a.pk:
            annotation_import.run_annotation_import_job(job=b)
        return real_write(plan, **kwargs)

    monkeypatch.setattr(annotation_import, "write_plan", b_writes_first)
    annotation_import.run_annotation_import_job(job=a)
    assert Annotation.objects.filter(item__project=project).count() == 4
    assert set(Annotation.objects.filter(item__project=project).values_list("source_import", flat=True)) == {b.id}
    assert imported_raters(project).count() == 2 and Assignment.objects.filter(project=project).count() == 4
    a.refresh_from_db()
    b.refresh_from_db()
    assert b.status == "done" and b.report["annotations_created"] == 4 and b.written_sha256 == b.sha256
    assert a.status == "done" and a.report["duplicate_of"] == b.id and a.report["annotations_created"] == 0
    assert a.report["already_imported"] == 4 and a.report["raters_new"] == 0 and a.written_sha256 is None


def test_the_database_refuses_a_second_writer_of_one_file(project, tmp_path):
    """The constraint itself, whatever the code before it: two imports of a project cannot both
    hold a file's hash as written; another project, or another file, can."""
    from django.db import IntegrityError, transaction

    a, b = (queued_import(project, LS) for _ in range(2))
    AnnotationImport.objects.filter(pk=a.pk).update(written_sha256="f" * 64)
    with pytest.raises(IntegrityError), transaction.atomic():
        AnnotationImport.objects.filter(pk=b.pk).update(written_sha256="f" * 64)
    AnnotationImport.objects.filter(pk=b.pk).update(written_sha256="e" * 64)
    other = valueground_project(make_user("r-other", researcher=True), [], tmp_path / "img2", n=1, k=1)
    AnnotationImport.objects.create(
        project=other, data_file=str(LS), data_format="labelstudio", written_sha256="f" * 64
    )


def test_confirm_posted_twice_gives_one_job(client, project, researcher, settings):
    """A double click on Confirm while the import waits for the worker: the second post gets the
    first's job, not a second job reading the same upload."""
    form = {"format": "labelstudio", "item_key": "id", "mapping": "quality=q3"}
    client.force_login(researcher)
    resp = client.post(reverse("annotation_import_preview", args=[project.id]), {**form, "file": ls_upload()})
    token = resp.context["staged"]["token"]
    # after the (inline) preview: the job waits for a worker, so its upload is still there
    settings.HV_INLINE_IMPORT_BYTES = 0
    confirm = reverse("annotation_import_confirm", args=[project.id])
    first, second = (client.post(confirm, {**form, "token": token}) for _ in range(2))
    job = AnnotationImport.objects.get(project=project)
    assert first.status_code == second.status_code == 302 and first["Location"] == second["Location"]
    assert first["Location"] == reverse("annotation_import_detail", args=[job.id])
    annotation_import.run_annotation_import_job(job=job)
    job.refresh_from_db()
    assert job.status == "done" and Annotation.objects.filter(item__project=project).count() == 4
    # once imported, the upload is gone: a late post is refused, nothing new
    late = client.post(confirm, {**form, "token": token})
    assert late.status_code == 400 and AnnotationImport.objects.filter(project=project).count() == 1


def test_a_job_whose_upload_was_consumed_fails_with_the_reason(project, tmp_path):
    job = queued_import(project, tmp_path / "gone.json")
    annotation_import.run_annotation_import_job(job=job)
    job.refresh_from_db()
    assert job.status == "failed" and "upload it again" in job.report["errors"][0] and nothing_written(project)


# ------------------------------------------------------------------------------- same study both ways
ANSWERS = [  # per item, per rater slot: a study with some disagreement
    [{"q1": 2, "q2": 1, "q3": 2, "q4": 1}, {"q1": 2, "q2": 2, "q3": 1, "q4": 1}, {"q1": 1, "q2": 1, "q3": 2, "q4": 0}],
    [{"q1": 0, "q2": 2, "q3": 2, "q4": 1}, {"q1": 1, "q2": 2, "q3": 2, "q4": 1}, {"q1": 0, "q2": 1, "q3": 1, "q4": 1}],
    [{"q1": 2, "q2": 0, "q3": 0, "q4": 0}, {"q1": 2, "q2": 1, "q3": 0, "q4": 0}, {"q1": 2, "q2": 0, "q3": 1, "q4": 1}],
    [{"q1": 1, "q2": 1, "q3": 1, "q4": 1}, {"q1": 0, "q2": 1, "q3": 2, "q4": 1}, {"q1": 1, "q2": 2, "q3": 1, "q4": 0}],
]
NATIONALITY = ["China", "Germany", "China"]


def test_the_same_study_collected_in_hv_or_imported_gives_the_same_validation_report(client, researcher, tmp_path):
    from annotate import annotating

    people = [make_user(f"a{i}") for i in range(3)]
    here = valueground_project(researcher, people, tmp_path / "a", n=4, k=3)
    for person, nationality in zip(people, NATIONALITY, strict=True):
        Rater.objects.filter(user=person).update(attributes={"nationality": nationality})
    slot = {}
    lines = ["item,rater,field,value,nationality"]
    for a in Assignment.objects.filter(project=here).select_related("item", "rater").order_by("id"):
        i = int(a.item.external_id[2:])
        s = slot[a.item_id] = slot.get(a.item_id, -1) + 1
        person = people.index(a.rater.user)
        given = ANSWERS[i][s]
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers=given)
        lines += [f"{a.item.external_id},src-{person},{q},{v},{NATIONALITY[person]}" for q, v in given.items()]
    elsewhere = valueground_project(researcher, [], tmp_path / "b", n=4, k=3)
    path = tmp_path / "study.csv"
    path.write_text("\n".join(lines) + "\n")
    assert "imported 12 annotations" in run(elsewhere, path, "csv")

    client.force_login(researcher)

    def report(project):
        url = reverse("api_validation_report", args=[project.id])
        resp = client.get(url, {"format": "json", "bootstrap": 200, "seed": 3})
        assert resp.status_code == 200, resp.content
        return resp.json()["tables"]

    collected, imported = report(here), report(elsewhere)
    # the raters' names differ (a0 in HV is the pseudonym imported-n of the source's src-0): the
    # tables name them only in captions; read them under the HV names
    text = json.dumps(imported)
    for r in imported_raters(elsewhere):
        text = text.replace(r.name, f"a{r.parameters['source_id'][4:]}")
    imported = json.loads(text)
    assert collected and json.dumps(collected).count("value") > 10
    assert len(collected) == len(imported)
    for a, b in zip(collected, imported, strict=True):
        assert a == b, (a.get("title"), b.get("title"))  # every cell, interval and note


# ------------------------------------------------------------------------------- exports
def test_the_exports_mark_imported_ratings_and_give_the_imports_provenance(project, researcher):
    import pandas as pd

    from curation.exports import export_root, run_export_job
    from curation.models import Export

    run(project, LS, "labelstudio", "--map", "quality=q3")
    job = AnnotationImport.objects.get(project=project)
    export = Export.objects.create(
        project=project, content="annotations", format="csv", scope="all", created_by=researcher
    )
    run_export_job(export=export)
    export.refresh_from_db()
    assert export.status == "done", export.message
    df = pd.read_csv(export_root(export) / "annotations.csv", dtype=str)
    assert set(df["source"]) == {f"imported:{job.id}"}
    assert {"1", "2"}.isdisjoint(set(df["rater"]))  # per-export pseudonyms, never the source ids
    imports = export.provenance["annotation_imports"]
    assert imports == [
        {
            "id": job.id,
            "source": f"imported:{job.id}",
            "file": LS.name,
            "sha256": hashlib.sha256(LS.read_bytes()).hexdigest(),
            "format": "labelstudio",
            "item_key": "id",
            "mapping": {"q1": "q1", "q2": "q2", "quality": "q3", "q4": "q4", "feedback": "feedback"},
            "explicit_mapping": {"quality": "q3"},
            "annotations": 4,
            "raters": 2,
            "skipped_cancelled": 1,
            "duplicate_of": None,
            "imported_at": job.finished_at.isoformat(),
        }
    ]
    hf = Export.objects.create(project=project, content="items", format="hf", scope="all", created_by=researcher)
    run_export_job(export=hf)
    hf.refresh_from_db()
    assert hf.status == "done", hf.message
    card = (export_root(hf) / "dataset" / "README.md").read_text()
    assert "## Imported ratings" in card and f"`imported:{job.id}`" in card and job.sha256 in card
    assert "quality -> q3" in card


# ------------------------------------------------------------------------------- batches (SQLite)
def test_an_error_between_write_batches_leaves_nothing_and_a_retry_writes_all(project, tmp_path, monkeypatch):
    """Issue 37 (M5): on SQLite the rows go in batches (here one rating per batch), each its own
    commit, so annotators' writes interleave. An error after the first batches fails the job and
    deletes what it wrote (the file is free to import again); on PostgreSQL the one transaction
    rolls back. Either way nothing of it stays, and the next import of the file writes it whole."""
    monkeypatch.setattr(annotation_import, "SQLITE_WRITE_BATCH", 1)
    monkeypatch.setattr(annotation_import, "SQLITE_YIELD_SECONDS", 0)
    real_rows = annotation_import.write_rows
    calls = []

    def fail_third(rows, *args, **kwargs):
        calls.append(len(rows))
        if len(calls) == 3 and len(rows) == 1:  # the third batch of one (SQLite)
            raise RuntimeError("disk full")
        real_rows(rows, *args, **kwargs)
        if len(rows) > 1:  # PostgreSQL: every row in one call, then the error before the commit
            raise RuntimeError("disk full")

    monkeypatch.setattr(annotation_import, "write_rows", fail_third)
    job = queued_import(project, shutil.copy(LS, tmp_path / "a.json"))
    job = annotation_import.run_annotation_import_job(job=job)
    assert job.status == "failed" and "disk full" in job.report["errors"][0], job.report
    assert nothing_written(project) and not Assignment.objects.filter(project=project, rater__backend="imported")
    job.refresh_from_db()
    assert job.written_sha256 is None

    monkeypatch.setattr(annotation_import, "write_rows", real_rows)
    again = annotation_import.run_annotation_import_job(
        job=queued_import(project, shutil.copy(LS, tmp_path / "b.json"))
    )
    assert again.status == "done" and again.report["duplicate_of"] is None
    assert Annotation.objects.filter(item__project=project, source_import=again).count() == 4


def test_a_killed_attempts_batches_are_deleted_before_the_job_runs_again(project, tmp_path):
    """A worker killed between two SQLite batches left some rows committed; the reaper hands the
    job out again, and its next run deletes them before it checks the file (else they would be
    taken for an earlier import's ratings), then writes the file whole, once."""
    first = annotation_import.run_annotation_import_job(
        job=queued_import(project, shutil.copy(LS, tmp_path / "a.json"))
    )
    assert first.status == "done"
    # the same rows as a killed attempt of a new job would have left them: written, not done
    retry = queued_import(project, shutil.copy(LS, tmp_path / "b.json"))
    Annotation.objects.filter(source_import=first).update(source_import=retry)
    AnnotationImport.objects.filter(pk=first.pk).delete()
    AnnotationImport.objects.filter(pk=retry.pk).update(written_sha256=first.sha256)
    retry = annotation_import.run_annotation_import_job(job=retry)
    assert retry.status == "done" and retry.report["duplicate_of"] is None, retry.report
    assert retry.report["annotations_created"] == 4 and retry.report["already_imported"] == 0
    assert Annotation.objects.filter(item__project=project).count() == 4
    assert Annotation.objects.filter(item__project=project, source_import=retry).count() == 4
    assert imported_raters(project).count() == 2
