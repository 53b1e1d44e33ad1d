"""The curation REST API: the whole flow for a pipeline, permissions (annotators and other
researchers get 403 on a project, 404 on exports), and bad requests answered 400 with a message."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.test import Client

from annotation.models import Item
from config.celery import app as celery_app
from curation.models import Export, ItemDecision
from tests.annotation.factories import make_user

from .helpers import FAIL, PASS, REJECT, submit_all, valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager_celery():
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=3, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {items[0].id: PASS, items[1].id: FAIL, items[2].id: REJECT}
    submit_all(project, lambda item, rater: plan[item.id])
    project.items_in_order = items
    return project


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_a_pipeline_sets_the_policy_applies_it_and_pulls_accepted_items(
    project, researcher, django_capture_on_commit_callbacks, eager_celery
):
    c = client_for(researcher)
    base = f"/api/projects/{project.id}"
    r = c.get(f"{base}/acceptance-policy/")
    assert r.status_code == 200 and r.json()["rule"] == "q1 + q2 >= 3 and q3 == 2 and q4 == 1"
    r = c.put(f"{base}/acceptance-policy/", {"aggregation": "majority"}, content_type="application/json")
    assert r.status_code == 200 and r.json()["aggregation"] == "majority"
    r = c.post(f"{base}/acceptance-policy/preview/", {"by": "generator"}, content_type="application/json")
    assert r.status_code == 200 and r.json()["total"]["accepted"] == 1 and set(r.json()["strata"]) == {"gpt", "gemini"}
    r = c.post(f"{base}/decisions/apply/", {}, content_type="application/json")
    assert r.status_code == 200 and r.json()["counts"] == {
        "accepted": 1,
        "rejected": 1,
        "needs_revision": 1,
        "pending": 0,
    }
    r = c.get(f"{base}/decisions/?status=needs_revision")
    assert r.status_code == 200 and [d["external_id"] for d in r.json()["results"]] == ["vg1"]
    item = project.items_in_order[2]
    r = c.post(
        f"{base}/decisions/{item.id}/override/",
        {"status": "accepted", "note": "ok after discussion"},
        content_type="application/json",
    )
    assert r.status_code == 200 and r.json()["source"] == "manual" and r.json()["decided_by"] == "res"
    r = c.get(f"{base}/decisions/{item.id}/history/")
    assert [(e["previous_status"], e["status"], e["user"]) for e in r.json()] == [
        ("", "rejected", "res"),
        ("rejected", "accepted", "res"),
    ]
    r = c.get(f"{base}/accepted-items/")
    assert sorted(i["external_id"] for i in r.json()["results"]) == ["vg0", "vg2"]

    with django_capture_on_commit_callbacks(execute=True):
        r = c.post(f"{base}/exports/", {"content": "items", "format": "parquet"}, content_type="application/json")
    assert r.status_code == 202
    detail = c.get(f"/api/exports/{r.json()['id']}/").json()
    assert detail["status"] == "done" and detail["progress"] == 1.0 and detail["download_url"]
    assert detail["provenance"]["acceptance_policy"]["aggregation"] == "majority"
    download = c.get(detail["download_url"])
    assert download.status_code == 200
    df = pd.read_parquet(io.BytesIO(b"".join(download.streaming_content)))
    assert sorted(df["id"]) == ["vg0", "vg2"]
    prov = c.get(f"/api/exports/{detail['id']}/files/provenance.json")
    assert json.loads(b"".join(prov.streaming_content))["export"]["id"] == detail["id"]
    assert c.get(f"/api/exports/{detail['id']}/files/../../../secret").status_code == 404
    assert c.get(f"/api/exports/{detail['id']}/files/nope.csv").status_code == 404
    listed = c.get(f"{base}/exports/").json()
    assert [e["id"] for e in listed] == [detail["id"]]


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("get", "acceptance-policy/", None),
        ("put", "acceptance-policy/", {"aggregation": "all"}),
        ("post", "acceptance-policy/preview/", {}),
        ("post", "decisions/apply/", {}),
        ("get", "decisions/", None),
        ("post", "exports/", {"content": "items", "format": "jsonl"}),
        ("get", "exports/", None),
        ("get", "accepted-items/", None),
    ],
)
def test_annotators_and_other_researchers_are_refused(project, annotators, method, path, body):
    other = make_user("other_res", researcher=True)
    for user in (annotators[0], other):
        c = client_for(user)
        url = f"/api/projects/{project.id}/{path}"
        r = (
            getattr(c, method)(url, body, content_type="application/json")
            if body is not None
            else getattr(c, method)(url)
        )
        # an annotator of the project is forbidden; an outsider is told nothing (as for no project)
        assert r.status_code == (403 if user is annotators[0] else 404), (user, path, r.status_code)
    assert Client().get(f"/api/projects/{project.id}/{path}").status_code in (401, 403)
    assert client_for(other).get(f"/api/projects/999999/{path}").status_code in (404, 405)
    assert not ItemDecision.objects.exists() and not Export.objects.exists()


def test_override_and_history_of_someone_elses_item(project, annotators):
    item = project.items_in_order[0]
    c = client_for(annotators[0])
    r = c.post(
        f"/api/projects/{project.id}/decisions/{item.id}/override/",
        {"status": "accepted", "note": "x"},
        content_type="application/json",
    )
    assert r.status_code == 403
    assert c.get(f"/api/projects/{project.id}/decisions/{item.id}/history/").status_code == 403


def test_exports_of_other_projects_are_not_found(project, researcher, annotators):
    export = Export.objects.create(
        project=project,
        created_by=researcher,
        content="items",
        format="jsonl",
        status="done",
        files=[{"name": "items.jsonl", "size": 1, "rows": 1, "sha256": "x"}],
    )
    other = make_user("other_res", researcher=True)
    for user in (annotators[0], other):
        c = client_for(user)
        assert c.get(f"/api/exports/{export.id}/").status_code == 404
        assert c.get(f"/api/exports/{export.id}/download/").status_code == 404
        assert c.get(f"/exports/{export.id}/download/").status_code == 404


@pytest.mark.parametrize(
    "path, body, message",
    [
        ("acceptance-policy/", {"rule": "q1 + q9 >= 3"}, "unknown field(s) q9"),
        ("acceptance-policy/", {"aggregation": "median"}, "unknown aggregation"),
        ("acceptance-policy/", {"revise_if": "comment"}, "revise_if refers to unknown field(s) comment"),
        ("acceptance-policy/preview/", {"policy": {"rule": "q5 == 1"}}, "unknown field(s) q5"),
        ("acceptance-policy/preview/", {"by": "colour"}, "unknown stratum 'colour'"),
        ("exports/", {"content": "items", "format": "xlsx"}, "unknown export format 'xlsx'"),
        ("exports/", {"content": "judges", "format": "csv"}, "unknown export content 'judges'"),
        ("exports/", {"content": "items", "format": "csv", "scope": "some"}, "unknown scope 'some'"),
        ("exports/", {"content": "annotations", "format": "hf"}, "Hugging Face folder format exports items"),
        ("decisions/{item}/override/", {"status": "great", "note": "x"}, "unknown status 'great'"),
        ("decisions/{item}/override/", {"status": "accepted", "note": ""}, "needs a note"),
    ],
)
def test_bad_requests_get_a_clear_400(project, researcher, path, body, message):
    c = client_for(researcher)
    method = c.put if path == "acceptance-policy/" else c.post
    url = f"/api/projects/{project.id}/{path.format(item=project.items_in_order[0].id)}"
    r = method(url, body, content_type="application/json")
    assert r.status_code == 400 and message in r.json()["detail"], r.content
    assert not Export.objects.exists()


def test_revision_reimport_over_the_api(project, researcher):
    from curation.services import apply_policy

    apply_policy(project=project, user=researcher)
    c = client_for(researcher)
    original = project.items_in_order[1]
    rec = {
        "id": original.external_id,
        **{k: v for k, v in original.data.items() if not k.startswith("image")},
        "image_a": "sha256:" + original.data["image_a"],
        "image_b": "sha256:" + original.data["image_b"],
        "option_a": "revised",
    }
    data = io.BytesIO((json.dumps(rec) + "\n").encode())
    data.name = "revised.jsonl"
    r = c.post(f"/api/projects/{project.id}/revisions/import/", {"data": data})
    assert r.status_code == 201 and r.json()["items_created"] == 1, r.content
    bad = io.BytesIO(b'{"id": "zzz"}\n')
    bad.name = "bad.jsonl"
    r = c.post(f"/api/projects/{project.id}/revisions/import/", {"data": bad})
    assert r.status_code == 400 and r.json()["errors"]


def test_the_curation_page(project, researcher, annotators):
    c = client_for(researcher)
    r = c.get(f"/projects/{project.id}/curation/")
    assert r.status_code == 200 and b"q1 + q2 &gt;= 3" in r.content
    r = c.post(
        f"/projects/{project.id}/curation/preview/",
        {"rule": "q4 == 1", "aggregation": "all", "min_human_ratings": "3", "by": "generator"},
    )
    assert r.status_code == 200 and b"gemini" in r.content
    r = c.post(f"/projects/{project.id}/curation/preview/", {"rule": "q9 == 1", "aggregation": "all"})
    assert r.status_code == 400 and b"unknown field(s) q9" in r.content
    r = c.post(
        f"/projects/{project.id}/curation/policy/",
        {"rule": "q4 == 1", "aggregation": "all", "min_human_ratings": "3", "apply": "1"},
    )
    assert r.status_code == 302
    assert ItemDecision.objects.filter(project=project, status="accepted").count() == 2
    assert client_for(annotators[0]).get(f"/projects/{project.id}/curation/").status_code == 403
