"""Annotation history (issue 14, point 5): an edit keeps the answer it replaces, whether it comes
from the web form or the API; a refused edit keeps nothing; the admin shows the history and
cannot change it."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import importing, projects
from annotation.models import Annotation, AnnotationRevision, Assignment

from .factories import jsonl, make_project, make_user, turing_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def turing(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=2)
    importing.import_items(project=project, data=jsonl(turing_records(2)), data_format="jsonl")
    return project


def logged_in(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def mine(user) -> Assignment:
    return Assignment.objects.filter(rater__user=user).order_by("position").first()


def test_a_form_edit_keeps_the_previous_answer(turing, annotators):
    c, a = logged_in(annotators[0]), mine(annotators[0])
    assert c.post(f"/a/{a.id}/", {"human_written": "left", "mode": "submit", "duration_ms": "4000"}).status_code == 302
    first = Annotation.objects.get(assignment=a)
    assert c.post(f"/a/{a.id}/", {"human_written": "right", "mode": "edit", "duration_ms": "1500"}).status_code == 302
    ann = Annotation.objects.get(assignment=a)
    assert ann.answers == {"human_written": "right"} and ann.revision == 2 and ann.duration_ms == 1500
    (old,) = AnnotationRevision.objects.filter(annotation=ann)
    assert old.revision == 1 and old.answers == {"human_written": "left"} and old.derived == first.derived
    assert old.duration_ms == 4000 and old.rubric_version == turing.rubric_version
    assert old.answered_at == first.updated_at and old.edited_at >= first.updated_at
    assert old.edited_by == annotators[0]


def test_an_api_edit_keeps_every_earlier_answer_in_order(turing, annotators):
    c, a = logged_in(annotators[1]), mine(annotators[1])
    url = f"/api/assignments/{a.id}/"
    r = c.post(
        url + "submit/", {"answers": {"human_written": "left"}, "duration_ms": 900}, content_type="application/json"
    )
    assert r.status_code == 201
    for answer in ("tie", "right"):
        r = c.put(url + "answer/", {"answers": {"human_written": answer}}, content_type="application/json")
        assert r.status_code == 200
    assert r.json()["revision"] == 3
    history = list(AnnotationRevision.objects.filter(annotation__assignment=a).order_by("revision"))
    assert [(h.revision, h.answers["human_written"]) for h in history] == [(1, "left"), (2, "tie")]
    assert [h.duration_ms for h in history] == [900, None]  # the API edit gave no time on task
    assert Annotation.objects.get(assignment=a).answers == {"human_written": "right"}


def test_a_refused_edit_keeps_nothing(turing, annotators):
    c, a = logged_in(annotators[0]), mine(annotators[0])
    url = f"/api/assignments/{a.id}/"
    assert (
        c.post(url + "submit/", {"answers": {"human_written": "left"}}, content_type="application/json").status_code
        == 201
    )
    r = c.put(url + "answer/", {"answers": {"human_written": "middle"}}, content_type="application/json")
    assert r.status_code == 400
    assert c.post(f"/a/{a.id}/", {"mode": "edit"}).status_code == 400  # a required answer missing
    projects.set_project_status(project=turing, status="closed")
    r = c.put(url + "answer/", {"answers": {"human_written": "right"}}, content_type="application/json")
    assert r.status_code == 400 and "closed" in r.json()["detail"]
    assert not AnnotationRevision.objects.exists()
    ann = Annotation.objects.get(assignment=a)
    assert ann.answers == {"human_written": "left"} and ann.revision == 1


def test_someone_else_cannot_edit_or_see_the_history(turing, annotators):
    a = mine(annotators[0])
    owner = logged_in(annotators[0])
    url = f"/api/assignments/{a.id}/"
    assert (
        owner.post(url + "submit/", {"answers": {"human_written": "left"}}, content_type="application/json").status_code
        == 201
    )
    other = logged_in(annotators[1])
    r = other.put(url + "answer/", {"answers": {"human_written": "right"}}, content_type="application/json")
    assert r.status_code == 404 and not AnnotationRevision.objects.exists()
    assert other.get("/admin/annotation/annotationrevision/").status_code == 302  # to the admin login


def test_the_admin_shows_the_history_read_only(turing, annotators):
    a = mine(annotators[0])
    c = logged_in(annotators[0])
    url = f"/api/assignments/{a.id}/"
    c.post(url + "submit/", {"answers": {"human_written": "left"}}, content_type="application/json")
    c.put(url + "answer/", {"answers": {"human_written": "tie"}}, content_type="application/json")
    rev = AnnotationRevision.objects.get()
    admin = logged_in(make_user("boss", superuser=True))
    listing = admin.get("/admin/annotation/annotationrevision/")
    change = f"/admin/annotation/annotationrevision/{rev.id}/change/"
    assert listing.status_code == 200 and change in listing.content.decode()
    page = admin.get(f"/admin/annotation/annotation/{rev.annotation_id}/change/")
    assert page.status_code == 200 and "left" in page.content.decode()  # the inline history
    assert admin.get("/admin/annotation/annotationrevision/add/").status_code == 403
    assert admin.get(change).status_code == 200  # view only
    assert admin.post(change, {"answers": '{"human_written": "right"}', "revision": 1}).status_code == 403
    assert admin.post(f"/admin/annotation/annotationrevision/{rev.id}/delete/", {"post": "yes"}).status_code == 403
    rev.refresh_from_db()
    assert rev.answers == {"human_written": "left"}
