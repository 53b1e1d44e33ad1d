"""Submitting, editing, skipping: the web form and the API share one validator."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate import annotating
from annotation import importing, projects
from annotation.models import Annotation, Assignment, Item
from tests.annotation.factories import jsonl, make_project, turing_records

pytestmark = pytest.mark.django_db

VG_ANSWERS = {"q1": 2, "q2": 1, "q3": 2, "q4": 1}


@pytest.fixture
def turing(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=2)
    importing.import_items(project=project, data=jsonl(turing_records(3)), data_format="jsonl")
    return project


def logged_in(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_web_submit_stores_answer_and_lands_on_next_item(turing, annotators):
    c = logged_in(annotators[0])
    first = c.get(f"/projects/{turing.id}/next/")
    a_id = int(first["Location"].strip("/").split("/")[-1])
    r = c.post(f"/a/{a_id}/", {"human_written": "left", "mode": "submit", "duration_ms": "1234"})
    assert r.status_code == 302 and r["Location"] != f"/a/{a_id}/"
    ann = Annotation.objects.get(assignment_id=a_id)
    a = Assignment.objects.get(pk=a_id)
    assert a.status == "submitted" and ann.answers == {"human_written": "left"} and ann.duration_ms == 1234
    left_field = a.presentation["pair_order"]["human_written"][0]
    assert ann.derived["correct"] == (1 if left_field == "human_utterance" else 0)
    assert ann.rubric_version == turing.rubric_version


def test_missing_required_answer_is_a_400_and_stores_nothing(turing, annotators):
    c = logged_in(annotators[0])
    a = Assignment.objects.filter(rater__user=annotators[0]).first()
    r = c.post(f"/a/{a.id}/", {"mode": "submit"})
    assert r.status_code == 400 and b"an answer is required" in r.content
    assert not Annotation.objects.exists()
    r = c.post(
        f"/api/assignments/{a.id}/submit/", {"answers": {"human_written": "middle"}}, content_type="application/json"
    )
    assert r.status_code == 400 and "human_written" in r.json()["errors"]
    r = c.post(
        f"/api/assignments/{a.id}/submit/",
        {"answers": {"human_written": "left", "extra": 1}},
        content_type="application/json",
    )
    assert r.status_code == 400 and r.json()["errors"]["extra"] == "unknown question"
    assert not Annotation.objects.exists()


def test_double_submission_is_refused_and_edit_is_explicit(turing, annotators):
    c = logged_in(annotators[0])
    a = Assignment.objects.filter(rater__user=annotators[0]).first()
    url = f"/api/assignments/{a.id}/"
    assert (
        c.post(url + "submit/", {"answers": {"human_written": "left"}}, content_type="application/json").status_code
        == 201
    )
    r = c.post(url + "submit/", {"answers": {"human_written": "right"}}, content_type="application/json")
    assert r.status_code == 400 and "already submitted" in r.json()["detail"]
    r = c.put(url + "answer/", {"answers": {"human_written": "tie"}}, content_type="application/json")
    assert r.status_code == 200 and r.json()["revision"] == 2
    ann = Annotation.objects.get(assignment=a)
    assert ann.answers == {"human_written": "tie"} and ann.derived["correct"] == 0
    assert Annotation.objects.count() == 1
    # The web form edits too (mode=edit), and shows the stored answer.
    page = c.get(f"/a/{a.id}/").content.decode()
    assert 'value="tie" tabindex="-1" data-key="3" checked' in page
    r = c.post(f"/a/{a.id}/", {"human_written": "right", "mode": "edit"})
    assert r.status_code == 302
    assert Annotation.objects.get(assignment=a).revision == 3


def test_closed_project_freezes_answers(turing, annotators):
    c = logged_in(annotators[0])
    a = Assignment.objects.filter(rater__user=annotators[0]).first()
    annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers={"human_written": "left"})
    projects.set_project_status(project=turing, status="closed")
    r = c.put(
        f"/api/assignments/{a.id}/answer/", {"answers": {"human_written": "right"}}, content_type="application/json"
    )
    assert r.status_code == 400 and "closed" in r.json()["detail"]
    page = c.get(f"/a/{a.id}/").content.decode()
    assert "read-only" in page and "disabled" in page
    assert Annotation.objects.get(assignment=a).answers == {"human_written": "left"}


def test_skip_needs_a_reason_and_then_the_queue_moves_on(turing, annotators):
    c = logged_in(annotators[0])
    a = Assignment.objects.filter(rater__user=annotators[0]).order_by("position").first()
    r = c.post(f"/api/assignments/{a.id}/skip/", {"reason": ""}, content_type="application/json")
    assert r.status_code == 400
    r = c.post(f"/a/{a.id}/skip/", {"reason": "I cannot read this language"})
    assert r.status_code == 302
    a.refresh_from_db()
    assert a.status == "skipped" and a.skip_reason == "I cannot read this language"
    nxt = c.get(f"/api/projects/{turing.id}/next/").json()["id"]
    assert nxt != a.id
    # A skipped item can still be answered later.
    r = c.post(
        f"/api/assignments/{a.id}/submit/", {"answers": {"human_written": "left"}}, content_type="application/json"
    )
    assert r.status_code == 201


def test_queue_progress_and_done_page(turing, annotators):
    c = logged_in(annotators[0])
    home = c.get("/").content.decode()
    assert "0 / 3" in home
    for a in Assignment.objects.filter(rater__user=annotators[0]):
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers={"human_written": "right"})
    assert "3 / 3" in c.get("/").content.decode()
    done = c.get(f"/projects/{turing.id}/next/")
    assert done.status_code == 200 and b"All done" in done.content
    assert c.get(f"/api/projects/{turing.id}/next/").status_code == 204


def test_item_html_is_escaped(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators)
    records = turing_records(1)
    records[0]["human_utterance"] = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    importing.import_items(project=project, data=jsonl(records), data_format="jsonl")
    c = logged_in(annotators[0])
    a = Assignment.objects.filter(rater__user=annotators[0]).first()
    page = c.get(f"/a/{a.id}/").content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    assert "<img src=x" not in page
    assert Item.objects.get().data["human_utterance"].startswith("<script>")  # stored as given


def test_api_never_reveals_which_side_is_human(turing, annotators):
    c = logged_in(annotators[0])
    a = Assignment.objects.filter(rater__user=annotators[0]).first()
    item = c.get(f"/api/assignments/{a.id}/").json()["item"]
    assert "human_utterance" not in item and "model_utterance" not in item
    left_field = a.presentation["pair_order"]["human_written"][0]
    assert item["pairs"]["human_written"]["left"] == a.item.data[left_field]


def test_model_hints_are_hidden_unless_enabled(researcher, annotators):
    from benchmarks.registry import get_preset

    records = get_preset("cqbench.story").demo_items(None)
    with_hints = next(r for r in records if r.get("model_verdicts"))
    hint_text = next(iter(with_hints["model_verdicts"]))
    for enabled in (False, True):
        project = make_project("cqbench.story", owner=researcher, annotators=annotators, name=f"hints {enabled}")
        project.show_model_hints = enabled
        project.save()
        importing.import_items(project=project, data=jsonl([with_hints]), data_format="jsonl")
        a = Assignment.objects.filter(project=project, rater__user=annotators[0]).get()
        page = logged_in(annotators[0]).get(f"/a/{a.id}/").content.decode()
        assert ("(model hint)" in page) is enabled
        api_item = logged_in(annotators[0]).get(f"/api/assignments/{a.id}/").json()["item"]
        assert ("model_verdicts" in api_item) is enabled
        assert hint_text


def test_researcher_creates_project_and_imports_through_the_web(researcher, annotators, tmp_path):
    c = logged_in(researcher)
    r = c.post("/projects/new/", {"name": "Turing study", "preset": "cqbench.turing", "k_per_item": "2"})
    assert r.status_code == 302
    pid = int(r["Location"].strip("/").split("/")[-1])
    for ann in annotators:
        assert c.post(f"/projects/{pid}/members/", {"username": ann.username, "role": "annotator"}).status_code == 302
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("pairs.jsonl", jsonl(turing_records(4)).encode())
    r = c.post(f"/projects/{pid}/import/", {"data": upload})
    assert r.status_code == 302 and "/imports/" in r["Location"]
    report_page = c.get(r["Location"]).content.decode()
    assert "Imported 4 items" in report_page
    bad = SimpleUploadedFile("pairs.jsonl", b'{"id": "x", "human_utterance": "a"}\n')
    r = c.post(f"/projects/{pid}/import/", {"data": bad})
    page = c.get(r["Location"]).content.decode()
    assert "Nothing was imported" in page and "line 1: missing required field &#x27;model_utterance&#x27;" in page
    assert Item.objects.filter(project_id=pid).count() == 4
    wrong = SimpleUploadedFile("pairs.xlsx", b"x")
    r = c.post(f"/projects/{pid}/import/", {"data": wrong}, follow=True)
    assert b"name it .jsonl or .csv" in r.content


def test_api_project_create_and_import(researcher, annotators):
    c = logged_in(researcher)
    r = c.post("/api/projects/", {"name": "API", "preset": "cqbench.turing"}, content_type="application/json")
    assert r.status_code == 201, r.content
    pid = r.json()["id"]
    assert c.post("/api/projects/", {"name": "x", "preset": "nope"}, content_type="application/json").status_code == 400
    from django.core.files.uploadedfile import SimpleUploadedFile

    r = c.post(
        f"/api/projects/{pid}/import/", {"data": SimpleUploadedFile("a.jsonl", jsonl(turing_records(2)).encode())}
    )
    assert r.status_code == 201 and r.json()["report"]["items_created"] == 2
    r = c.post(f"/api/projects/{pid}/import/", {"data": SimpleUploadedFile("a.jsonl", b"{oops\n")})
    assert r.status_code == 400 and r.json()["report"]["errors"][0].startswith("line 1:")
    job_id = r.json()["id"]
    assert c.get(f"/api/imports/{job_id}/").json()["status"] == "failed"


def test_oversized_upload_is_refused(researcher, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.HV_MAX_UPLOAD_BYTES = 100
    project = make_project("cqbench.turing", owner=researcher)
    c = logged_in(researcher)
    r = c.post(
        f"/api/projects/{project.id}/import/",
        {"data": SimpleUploadedFile("a.jsonl", jsonl(turing_records(20)).encode())},
    )
    assert r.status_code == 400 and "larger than" in r.json()["detail"]
    assert not Item.objects.exists()


def test_openapi_schema_and_docs(researcher):
    c = logged_in(researcher)
    schema = c.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/assignments/{id}/submit/" in schema.content
    assert c.get("/api/docs/").status_code == 200


def test_rubric_version_is_reused_for_the_same_schema(researcher):
    p1 = make_project("cqbench.turing", owner=researcher, name="a")
    p2 = make_project("cqbench.turing", owner=researcher, name="b")
    assert p1.rubric_version_id == p2.rubric_version_id
