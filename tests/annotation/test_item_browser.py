"""The item browser (``/projects/<id>/items/``), its API twin (``/api/projects/<id>/items/``) and
the read-only annotator's view of an item: search, filters by stratum, status, decision and
sample, counts, pagination, and who may see them."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate import annotating
from annotate import views as annotate_views
from annotation import importing
from annotation.models import Assignment, Item
from curation import item_views
from curation import services as curation
from studies.models import Sample, SampleItem

from .factories import jsonl, make_project, make_user, turing_records

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def world(researcher, annotators):
    """Six Turing items, k = 2 with two annotators, in every status:

    t0 both submitted (complete) · t1 one submitted, one waiting (in progress) · t2 untouched
    (assigned) · t3 opened (in progress) · t4 both skipped (unassigned) · t5 a QC item, never
    handed out (unassigned)."""
    ann1, ann2 = annotators
    project = make_project("cqbench.turing", owner=researcher, annotators=[ann1, ann2], k=2)
    records = turing_records(6)
    records[2]["human_utterance"] = "the quick brown fox"
    records[0]["meta"] = {"topic": "food"}
    records[1]["meta"] = {"topic": "sport"}
    records[3]["meta"] = {"topic": "food"}
    records[5]["meta"] = {"qc": True, "topic": "sport"}
    assert importing.import_items(project=project, data=jsonl(records), data_format="jsonl").ok
    items = {it.external_id: it for it in Item.objects.filter(project=project)}

    def mine(ext, user):
        return Assignment.objects.get(item=items[ext], rater__user=user)

    for user in (ann1, ann2):
        a = mine("t0", user)
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers={"human_written": "left"})
    a = mine("t1", ann1)
    annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers={"human_written": "right"})
    a = mine("t3", ann2)
    annotating.open_assignment(assignment=a, rater=a.rater)
    for user in (ann1, ann2):
        a = mine("t4", user)
        annotating.skip_assignment(assignment_id=a.id, rater=a.rater, reason="cannot tell")
    curation.override_decision(item=items["t0"], user=researcher, status="accepted", note="fine")
    curation.override_decision(item=items["t1"], user=researcher, status="rejected", note="bad")
    sample = Sample.objects.create(project=project, name="pilot")
    for ext in ("t0", "t2"):
        SampleItem.objects.create(sample=sample, item=items[ext])
    return {"project": project, "items": items, "sample": sample, "researcher": researcher, "annotators": annotators}


def listed(response) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    return [r["item"].external_id for r in response.context["rows"]]


def url(world, **query) -> str:
    from urllib.parse import urlencode

    return f"/projects/{world['project'].id}/items/" + (f"?{urlencode(query)}" if query else "")


def test_every_item_listed_with_its_status_and_counts(world):
    c = client_for(world["researcher"])
    r = c.get(url(world))
    assert listed(r) == ["t0", "t1", "t2", "t3", "t4", "t5"]
    status = {row["item"].external_id: row["status"] for row in r.context["rows"]}
    assert status == {
        "t0": "complete",
        "t1": "in_progress",
        "t2": "assigned",
        "t3": "in_progress",
        "t4": "unassigned",
        "t5": "unassigned",
    }
    counts = {s: n for s, _label, n in r.context["counts"]}
    assert counts == {"unassigned": 2, "assigned": 1, "in_progress": 2, "complete": 1}
    row = {row["item"].external_id: row for row in r.context["rows"]}
    assert (row["t0"]["submitted"], row["t1"]["submitted"], row["t1"]["waiting"]) == (2, 1, 1)
    assert row["t0"]["decision"] == "accepted" and row["t2"]["decision"] == "pending" and not row["t2"]["decided"]
    assert row["t0"]["samples"] == ["pilot"]
    html = r.content.decode()
    assert "6 items of 6 match" in html
    assert f"/projects/{world['project'].id}/items/{world['items']['t2'].id}/preview/" in html


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("unassigned", ["t4", "t5"]),
        ("assigned", ["t2"]),
        ("in_progress", ["t1", "t3"]),
        ("complete", ["t0"]),
    ],
)
def test_filter_by_status(world, status, expected):
    r = client_for(world["researcher"]).get(url(world, status=status))
    assert listed(r) == expected
    assert all(row["status"] == status for row in r.context["rows"])


def test_status_reads_a_pooled_plans_open_places(world):
    """An item whose only waiting work is an open place in an active plan's pool is assigned."""
    from studies.models import AssignmentPlan, PoolSlot

    item = world["items"]["t5"]
    plan = AssignmentPlan.objects.create(project=world["project"], sample=world["sample"], name="pool", k=1)
    slot = PoolSlot.objects.create(plan=plan, item=item)
    c = client_for(world["researcher"])
    assert "t5" in listed(c.get(url(world, status="assigned")))
    plan.status = AssignmentPlan.Status.CLOSED
    plan.save()
    assert "t5" in listed(c.get(url(world, status="unassigned")))
    slot.delete()


def test_search_reads_the_external_id_and_the_text_fields(world):
    c = client_for(world["researcher"])
    assert listed(c.get(url(world, q="T3"))) == ["t3"]
    assert listed(c.get(url(world, q="BROWN fox"))) == ["t2"]  # human_utterance, any case
    assert listed(c.get(url(world, q="model says 4"))) == ["t4"]
    assert listed(c.get(url(world, q="nothing like this"))) == []


def test_filter_by_stratum_column_and_meta_key(world):
    c = client_for(world["researcher"])
    assert listed(c.get(url(world, stratum="country=Japan"))) == ["t1", "t3", "t5"]
    assert listed(c.get(url(world, stratum="topic=food"))) == ["t0", "t3"]
    assert listed(c.get(url(world, stratum="meta.topic=sport"))) == ["t1", "t5"]
    r = c.get(url(world))
    options = {s["key"]: dict(s["values"]) for s in r.context["strata"]}
    assert options["country"] == {"Germany": 3, "Japan": 3}
    assert options["topic"] == {"food": 2, "sport": 2}
    assert "qc" not in options  # quality-control flags are not strata
    assert 'value="topic=food"' in r.content.decode()


def test_filter_by_decision_and_sample_and_combined(world):
    c = client_for(world["researcher"])
    assert listed(c.get(url(world, decision="accepted"))) == ["t0"]
    assert listed(c.get(url(world, decision="rejected"))) == ["t1"]
    assert listed(c.get(url(world, decision="pending"))) == ["t2", "t3", "t4", "t5"]
    assert listed(c.get(url(world, sample="in"))) == ["t0", "t2"]
    assert listed(c.get(url(world, sample="out"))) == ["t1", "t3", "t4", "t5"]
    assert listed(c.get(url(world, sample=str(world["sample"].id)))) == ["t0", "t2"]
    r = c.get(url(world, sample="in", status="assigned", stratum="country=Germany"))
    assert listed(r) == ["t2"]
    assert {s: n for s, _label, n in r.context["counts"]} == {
        "unassigned": 0,
        "assigned": 1,
        "in_progress": 0,
        "complete": 0,
    }


def test_pages_keep_the_filters(world, monkeypatch):
    monkeypatch.setattr(item_views, "BROWSER_PAGE", 2)
    c = client_for(world["researcher"])
    first = c.get(url(world, stratum="country=Germany"))
    assert listed(first) == ["t0", "t2"]
    assert first.context["page"].paginator.num_pages == 2
    assert "?stratum=country%3DGermany&amp;page=2" in first.content.decode()
    assert listed(c.get(url(world, stratum="country=Germany", page=2))) == ["t4"]
    assert listed(c.get(url(world, page=3))) == ["t4", "t5"]
    assert listed(c.get(url(world, page=99))) == ["t4", "t5"]  # past the end: the last page


@pytest.mark.parametrize(
    "query",
    [{"status": "done"}, {"decision": "maybe"}, {"stratum": "country"}, {"stratum": "a b=c"}, {"sample": "999999"}],
)
def test_a_filter_that_names_nothing_is_refused_with_why(world, query):
    c = client_for(world["researcher"])
    r = c.get(url(world, **query))
    assert r.status_code == 400 and r.context["error"]
    api = c.get(f"/api/projects/{world['project'].id}/items/", query)
    assert api.status_code == 400 and api.json()["detail"]


def test_another_projects_sample_is_not_a_filter(world):
    other = make_project("cqbench.turing", owner=world["researcher"], name="other")
    theirs = Sample.objects.create(project=other, name="theirs")
    r = client_for(world["researcher"]).get(url(world, sample=str(theirs.id)))
    assert r.status_code == 400


def test_api_items_take_the_same_filters(world):
    c = client_for(world["researcher"])
    base = f"/api/projects/{world['project'].id}/items/"
    ids = lambda r: [row["external_id"] for row in r.json()["results"]]  # noqa: E731
    assert ids(c.get(base)) == ["t0", "t1", "t2", "t3", "t4", "t5"]
    assert ids(c.get(base, {"status": "in_progress"})) == ["t1", "t3"]
    assert ids(c.get(base, {"q": "fox", "decision": "pending"})) == ["t2"]
    assert ids(c.get(base, {"stratum": "topic=food", "sample": "in"})) == ["t0"]


def test_annotators_view_of_an_item_is_the_annotate_page_without_submitting(world):
    c = client_for(world["researcher"])
    item = world["items"]["t2"]
    r = c.get(f"/projects/{world['project'].id}/items/{item.id}/preview/")
    assert r.status_code == 200
    assert r.templates[0].name == "annotation/annotate.html"
    html = r.content.decode()
    assert "the quick brown fox" in html and "model says 2" in html
    assert 'data-testid="preview"' in html and 'data-testid="preview-note"' in html
    assert 'id="submit-btn"' not in html and "data-editable" not in html
    assert "Skip this item" not in html
    assert 'name="human_written"' in html and "disabled" in html
    # looking is not opening: nobody's assignment changed
    assert not Assignment.objects.filter(item=item).exclude(status=Assignment.Status.ASSIGNED).exists()


def test_the_project_page_links_the_item_browser(world):
    r = client_for(world["researcher"]).get(f"/projects/{world['project'].id}/")
    assert f"/projects/{world['project'].id}/items/" in r.content.decode()


# ------------------------------------------------------------------------------- permissions
def test_outsiders_get_404_annotators_403_anonymous_the_login(world):
    project = world["project"]
    item = world["items"]["t0"]
    pages = [f"/projects/{project.id}/items/", f"/projects/{project.id}/items/{item.id}/preview/"]
    api = f"/api/projects/{project.id}/items/"
    outsider = make_user("outsider", researcher=True)
    for page in pages:
        assert client_for(outsider).get(page).status_code == 404, page
        assert client_for(world["annotators"][0]).get(page).status_code == 403, page
        anon = Client().get(page)
        assert anon.status_code == 302 and anon["Location"].startswith("/login/"), page
        assert client_for(world["researcher"]).get(page).status_code == 200, page
        admin = make_user(f"admin{len(page)}", superuser=True)
        assert client_for(admin).get(page).status_code == 200, page
    assert client_for(outsider).get(api).status_code == 404
    assert client_for(world["annotators"][0]).get(api).status_code == 403
    assert Client().get(api).status_code in (401, 403)


def test_an_item_of_another_project_is_404_on_this_projects_preview(world):
    other = make_project("cqbench.turing", owner=world["researcher"], name="other")
    importing.import_items(project=other, data=jsonl(turing_records(1, start=50)), data_format="jsonl")
    theirs = Item.objects.get(project=other)
    c = client_for(world["researcher"])
    assert c.get(f"/projects/{world['project'].id}/items/{theirs.id}/preview/").status_code == 404
    assert c.get(f"/projects/{world['project'].id}/items/99999999/preview/").status_code == 404


# ------------------------------------------------------------------------------- my queue
def test_the_annotators_queue_is_paginated(world, monkeypatch):
    monkeypatch.setattr(annotate_views, "QUEUE_PAGE", 2)
    project = world["project"]
    c = client_for(world["annotators"][0])
    first = c.get(f"/projects/{project.id}/queue/")
    assert first.status_code == 200
    page = first.context["assignments"]
    assert page.paginator.count == 5 and page.paginator.num_pages == 3  # t0-t4 (t5 is a QC item)
    assert [a.item.external_id for a in page] == ["t0", "t1"]
    html = first.content.decode()
    assert 'data-testid="pager"' in html and "?page=2" in html
    third = c.get(f"/projects/{project.id}/queue/?page=3")
    assert [a.item.external_id for a in third.context["assignments"]] == ["t4"]
    assert "<td>5</td>" in third.content.decode()  # rows keep their place in the whole queue
