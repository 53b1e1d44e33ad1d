"""Who may see and do what: annotators only their own assignments, never others' answers;
researchers and admins their projects. Every endpoint appears here."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate import annotating
from annotation import importing
from annotation.models import Annotation, Asset, Assignment, ImportJob, Item, Project

from .factories import jsonl, make_project, make_user, turing_records, valueground_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(researcher, annotators, tmp_path):
    ann1, ann2 = annotators
    project = make_project("valueground.pair_quality", owner=researcher, annotators=[ann1, ann2], k=2)
    report = importing.import_items(
        project=project, data=jsonl(valueground_records(tmp_path, n=2)), data_format="jsonl", images=tmp_path
    )
    assert report.ok
    other_owner = make_user("other_res", researcher=True)
    other = make_project("cqbench.turing", owner=other_owner, annotators=[ann2], k=1)
    importing.import_items(project=other, data=jsonl(turing_records(2)), data_format="jsonl")
    a1 = Assignment.objects.filter(rater__user=ann1, project=project).first()
    a2 = Assignment.objects.filter(rater__user=ann2, project=project, item=a1.item).first()
    answers = {"q1": 2, "q2": 2, "q3": 2, "q4": 1}
    annotating.submit_annotation(assignment_id=a2.id, rater=a2.rater, answers=answers)
    job = ImportJob.objects.create(project=project, created_by=researcher, data_file="x", data_format="jsonl")
    return {
        "project": project,
        "other": other,
        "a1": a1,
        "a2": a2,
        "ann1": ann1,
        "ann2": ann2,
        "researcher": researcher,
        "other_owner": other_owner,
        "job": job,
    }


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_anonymous_users_are_sent_to_login_and_api_refuses(world):
    c = Client()
    for url in [
        "/",
        f"/a/{world['a1'].id}/",
        f"/projects/{world['project'].id}/",
        "/projects/new/",
        f"/projects/{world['project'].id}/queue/",
    ]:
        r = c.get(url)
        assert r.status_code == 302 and r["Location"].startswith("/login/"), url
    for url in ["/api/projects/", "/api/assignments/", f"/api/assignments/{world['a1'].id}/"]:
        assert c.get(url).status_code in (401, 403), url
    assert c.post(f"/api/assignments/{world['a1'].id}/submit/", {}, content_type="application/json").status_code in (
        401,
        403,
    )


def test_annotator_cannot_open_or_submit_an_assignment_of_someone_else(world):
    c = client_for(world["ann1"])
    a2 = world["a2"]
    assert c.get(f"/a/{a2.id}/").status_code == 404
    assert c.post(f"/a/{a2.id}/", {"q1": "0", "q2": "0", "q3": "0", "q4": "0", "mode": "edit"}).status_code == 404
    assert c.post(f"/a/{a2.id}/skip/", {"reason": "x"}).status_code == 404
    assert c.get(f"/api/assignments/{a2.id}/").status_code == 404
    r = c.post(
        f"/api/assignments/{a2.id}/submit/",
        {"answers": {"q1": 0, "q2": 0, "q3": 0, "q4": 0}},
        content_type="application/json",
    )
    assert r.status_code == 404
    assert (
        c.put(f"/api/assignments/{a2.id}/answer/", {"answers": {}}, content_type="application/json").status_code == 404
    )
    assert (
        c.post(f"/api/assignments/{a2.id}/skip/", {"reason": "x"}, content_type="application/json").status_code == 404
    )
    assert Annotation.objects.get(assignment=a2).answers["q1"] == 2  # untouched


def test_annotator_never_sees_other_peoples_answers(world):
    c = client_for(world["ann1"])
    page = c.get(f"/a/{world['a1'].id}/").content.decode()
    assert '" checked' not in page  # ann2 answered the same item; ann1's form is empty
    listed = c.get("/api/assignments/").json()["results"]
    assert {row["id"] for row in listed} == set(
        Assignment.objects.filter(rater__user=world["ann1"]).values_list("id", flat=True)
    )
    detail = c.get(f"/api/assignments/{world['a1'].id}/").json()
    assert detail["answers"] is None
    # Annotators cannot list items or projects' internals.
    assert c.get(f"/api/projects/{world['project'].id}/items/").status_code == 403


def test_annotator_cannot_reach_admin_import_or_management_pages(world):
    c = client_for(world["ann1"])
    pid = world["project"].id
    assert c.get(f"/projects/{pid}/").status_code == 403
    assert c.get("/projects/new/").status_code == 403
    assert c.post("/projects/new/", {"name": "x", "preset": "cqbench.turing"}).status_code == 403
    assert c.post(f"/projects/{pid}/import/", {}).status_code == 403
    assert c.post(f"/projects/{pid}/members/", {"username": "ann1", "role": "researcher"}).status_code == 403
    assert c.post(f"/projects/{pid}/status/", {"status": "closed"}).status_code == 403
    assert c.get(f"/imports/{world['job'].id}/").status_code == 403
    assert c.get("/admin/").status_code == 302  # Django admin: staff only, redirects to its login
    assert (
        c.post("/api/projects/", {"name": "x", "preset": "cqbench.turing"}, content_type="application/json").status_code
        == 403
    )
    assert c.post(f"/api/projects/{pid}/import/", {}).status_code == 403
    assert c.get(f"/api/imports/{world['job'].id}/").status_code == 404


def test_annotator_cannot_open_a_project_queue_they_do_not_belong_to(world):
    c = client_for(world["ann1"])
    other = world["other"].id
    assert c.get(f"/projects/{other}/queue/").status_code == 404
    assert c.get(f"/projects/{other}/next/").status_code == 404
    assert c.get(f"/api/projects/{other}/next/").status_code == 404
    assert c.get(f"/api/projects/{other}/").status_code == 404


def test_images_are_served_only_to_people_who_may_see_them(world):
    asset = Asset.objects.filter(items__project=world["project"]).first()
    assert client_for(world["ann1"]).get(f"/assets/{asset.sha256}/").status_code == 200
    thumb = client_for(world["ann1"]).get(f"/assets/{asset.sha256}/thumb/")
    assert thumb.status_code == 200 and thumb["Content-Type"] == "image/webp"
    from PIL import Image

    with Image.open(__import__("io").BytesIO(b"".join(thumb.streaming_content))) as img:
        assert img.format == "WEBP" and max(img.size) <= 320
    assert client_for(world["researcher"]).get(f"/assets/{asset.sha256}/").status_code == 200
    outsider = make_user("outsider")
    assert client_for(outsider).get(f"/assets/{asset.sha256}/").status_code == 404
    assert client_for(world["other_owner"]).get(f"/assets/{asset.sha256}/").status_code == 404
    assert Client().get(f"/assets/{asset.sha256}/").status_code == 302


def test_researcher_sees_only_their_projects(world):
    c = client_for(world["other_owner"])
    pid = world["project"].id
    # an outsider gets the answer a missing project gets: pages and API alike (issue 12, 15)
    missing = max(p.id for p in Project.objects.all()) + 1
    assert c.get(f"/projects/{pid}/").status_code == c.get(f"/projects/{missing}/").status_code == 404
    assert c.get(f"/api/projects/{pid}/").status_code == 404
    assert c.get(f"/api/projects/{pid}/items/").status_code == 404
    assert c.get(f"/imports/{world['job'].id}/").status_code == 404
    assert c.get(f"/api/imports/{world['job'].id}/").status_code == 404
    ids = {p["id"] for p in c.get("/api/projects/").json()["results"]}
    assert ids == {world["other"].id}


def test_researcher_and_admin_manage_their_project(world):
    pid = world["project"].id
    for user in (world["researcher"], make_user("root", superuser=True)):
        c = client_for(user)
        assert c.get(f"/projects/{pid}/").status_code == 200
        assert c.get(f"/api/projects/{pid}/items/").json()["count"] == Item.objects.filter(project_id=pid).count()
        assert c.get(f"/imports/{world['job'].id}/").status_code == 200
    admin = client_for(make_user("root2", superuser=True))
    assert admin.get("/admin/annotation/annotation/").status_code == 200


def test_annotator_can_read_own_queue_and_item_without_hidden_fields(world):
    c = client_for(world["ann1"])
    assert c.get(f"/projects/{world['project'].id}/queue/").status_code == 200
    detail = c.get(f"/api/assignments/{world['a1'].id}/").json()
    assert set(detail["item"]["image_a"]) == {"url", "thumb"}
    assert detail["rubric"]["questions"][0]["id"] == "q1"


def test_django_admin_lists_every_model_for_staff_only(world):
    from django.apps import apps
    from django.contrib import admin as django_admin

    ours = [m for m in apps.get_models() if m._meta.app_label in ("annotation", "agreement")]
    assert ours and all(django_admin.site.is_registered(m) for m in ours)
    staff = client_for(make_user("staff_root", superuser=True))
    for m in ours:
        url = f"/admin/{m._meta.app_label}/{m._meta.model_name}/"
        assert staff.get(url).status_code == 200, url
        assert client_for(world["ann1"]).get(url).status_code == 302, url


def test_project_page_links_every_project_tool(world):
    from django.urls import reverse

    pid = world["project"].id
    page = client_for(world["researcher"]).get(f"/projects/{pid}/").content.decode()
    for name in ("design", "dashboard", "judges", "agreement_report", "curation"):
        url = reverse(name, args=[pid])
        assert f'href="{url}"' in page, name
        assert client_for(world["researcher"]).get(url).status_code == 200, url
