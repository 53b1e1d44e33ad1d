"""Issue 12, finding 8: an id that names nothing (``false``, ``null,null``, a number larger than a
bigint) is a 404 in a path and a 400 in a query parameter, never a server error."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import importing
from annotation.models import Item

from .factories import jsonl, make_project, valueground_records

pytestmark = pytest.mark.django_db

HUGE = "4813842081547918770176"


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators, k=2)
    report = importing.import_items(
        project=project, data=jsonl(valueground_records(tmp_path, n=2)), data_format="jsonl", images=tmp_path
    )
    assert report.ok
    return project


def client_for(user) -> Client:
    c = Client(raise_request_exception=False)
    c.force_login(user)
    return c


@pytest.mark.parametrize(
    "url",
    [
        "/api/projects/false/items/",
        "/api/projects/null%2Cnull/next/",
        "/api/projects/null,null/items/",
        f"/api/projects/{HUGE}/items/",
        f"/api/projects/{HUGE}/next/",
        f"/api/projects/{HUGE}/",
        "/api/projects/-1/",
        "/api/projects/1.5/items/",
        "/api/projects/%C2%B2/items/",  # "²": a digit to str.isdigit, not to int() (issue 37)
        "/api/projects/%C2%B2/next/",
        "/api/projects/%C2%B2/",
        "/api/imports/false/",
        f"/api/imports/{HUGE}/",
        "/api/assignments/false/",
        f"/api/assignments/{HUGE}/",
        f"/projects/{HUGE}/",
        f"/projects/{HUGE}/queue/",
        f"/a/{HUGE}/",
        f"/imports/{HUGE}/",
        f"/api/judge-runs/{HUGE}/",
        f"/api/projects/{HUGE}/judges/",
        f"/api/exports/{HUGE}/",
        f"/api/projects/{HUGE}/decisions/",
    ],
)
def test_bad_ids_in_paths_are_404(project, researcher, annotators, url):
    for user in (researcher, annotators[0]):
        resp = client_for(user).get(url)
        assert resp.status_code == 404, (url, user.username, resp.status_code)


@pytest.mark.parametrize("value", [HUGE, "false", "null,null", "-1", "1.5", "1e3", " 1", "²"])
def test_a_bad_project_query_parameter_is_400(project, annotators, value):
    resp = client_for(annotators[0]).get("/api/assignments/", {"project": value})
    assert resp.status_code == 400, (value, resp.status_code)
    assert "project" in resp.content.decode()


def test_good_ids_still_work_and_huge_ids_in_bodies_are_refused_cleanly(project, researcher, annotators):
    c = client_for(annotators[0])
    assert c.get("/api/assignments/", {"project": project.id}).status_code == 200
    assert c.get(f"/api/projects/{project.id}/next/").status_code == 200
    r = client_for(researcher)
    assert r.get(f"/api/projects/{project.id}/items/").status_code == 200
    assert r.get(f"/api/projects/{project.id}/items/", {"offset": HUGE}).status_code == 200
    item = Item.objects.filter(project=project).first()
    resp = r.post(
        f"/api/projects/{project.id}/decisions/{HUGE}/override/",
        {"status": "accepted", "reason": "x"},
        content_type="application/json",
    )
    assert resp.status_code == 404
    assert item is not None


def test_a_superscript_digit_is_no_id_in_a_post_path_or_a_sample_query(project, researcher):
    """Issue 37: ``/api/projects/²/import/`` was a server error (``"²".isdigit()`` holds, ``int``
    refuses it); it names no project. ``?sample=²`` names no sample."""
    r = client_for(researcher)
    assert r.post("/api/projects/%C2%B2/import/", {}).status_code == 404
    resp = r.get(f"/api/projects/{project.id}/items/", {"sample": "²"})
    assert resp.status_code == 400 and "no sample" in resp.json()["detail"]
