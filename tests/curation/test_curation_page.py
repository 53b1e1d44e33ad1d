"""The curation page: "preview by" offers the project's strata and meta keys (and the preview
groups by either), flash messages are sentences, and the decisions list is paginated."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from annotation import importing
from annotation.models import Item
from core.errors import DomainError
from curation import services, views
from tests.annotation.factories import jsonl, make_project, valueground_records

from .helpers import PASS, REJECT, submit_all

pytestmark = pytest.mark.django_db

RUNS = ["a", "b", "a", "b", "a"]


@pytest.fixture
def project(researcher, annotators, tmp_path):
    """Five ValueGround items with a ``meta.run`` stratum; items 0, 2 pass, the others fail."""
    p = make_project("valueground.pair_quality", owner=researcher, annotators=annotators[:2], k=2)
    records = valueground_records(tmp_path, n=5)
    for record, run in zip(records, RUNS, strict=True):
        record["meta"] = {"run": run}
    assert importing.import_items(project=p, data=jsonl(records), data_format="jsonl", images=tmp_path).ok
    passing = {"vg0", "vg2"}
    submit_all(p, lambda item, rater: PASS if item.external_id in passing else REJECT)
    return p


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def flashed(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_preview_by_offers_the_strata_items_fill_and_their_meta_keys(project, researcher):
    r = client_for(researcher).get(f"/projects/{project.id}/curation/")
    assert r.status_code == 200
    assert r.context["strata"] == ["country", "generator", "run"]  # region, category, dimension: empty
    html = r.content.decode()
    assert '<option value="run">run</option>' in html and '<option value="region">' not in html


def test_preview_groups_by_a_meta_key(project, researcher):
    result = services.preview_policy(project=project, by="run")
    assert result["by"] == "run"
    assert result["strata"]["a"]["accepted"] == 2 and result["strata"]["a"]["total"] == 3  # vg0, vg2 pass; vg4
    assert result["strata"]["b"]["accepted"] == 0 and result["strata"]["b"]["total"] == 2
    assert services.preview_policy(project=project, by="meta.run")["strata"] == result["strata"]
    with pytest.raises(DomainError, match=r"unknown stratum 'nothing': use one of country, .*, run"):
        services.preview_policy(project=project, by="nothing")  # a key no item has
    r = client_for(researcher).post(f"/projects/{project.id}/curation/preview/", {"by": "run"})
    assert r.status_code == 200 and r.context["preview"]["strata"].keys() == {"a", "b"}
    bad = client_for(researcher).post(f"/projects/{project.id}/curation/preview/", {"by": "a b"})
    assert bad.status_code == 400


def test_applying_the_policy_flashes_a_sentence(project, researcher):
    r = client_for(researcher).post(f"/projects/{project.id}/curation/policy/", {"apply": "1"})
    assert r.status_code == 302
    (message,) = flashed(r)
    assert message == (
        "Policy applied: 2 accepted, 3 rejected, 0 need revision, 0 pending "
        "(5 decisions changed, 0 manual decisions kept)."
    )
    assert "{" not in message and "'" not in message


def test_a_manual_decision_flashes_a_sentence(project, researcher):
    item = Item.objects.get(project=project, external_id="vg1")
    r = client_for(researcher).post(
        f"/projects/{project.id}/curation/items/{item.id}/override/", {"status": "needs_revision", "note": "fix B"}
    )
    assert flashed(r) == ["Item vg1 (version 1) is now needs revision."]


def test_one_change_is_said_in_the_singular(project, researcher):
    report = services.ApplyReport(counts={"accepted": 1}, changed=1, kept_manual=1)
    assert views.applied_message(report) == (
        "Policy applied: 1 accepted, 0 rejected, 0 need revision, 0 pending "
        "(1 decision changed, 1 manual decision kept)."
    )


def test_decisions_are_paginated_with_the_filter_kept(project, researcher, monkeypatch):
    monkeypatch.setattr(views, "DECISION_ROWS", 2)
    services.apply_policy(project=project, user=researcher)
    c = client_for(researcher)
    first = c.get(f"/projects/{project.id}/curation/")
    assert [d.item.external_id for d in first.context["decisions"]] == ["vg0", "vg1"]
    assert first.context["decisions"].paginator.num_pages == 3
    assert 'data-testid="pager"' in first.content.decode()
    last = c.get(f"/projects/{project.id}/curation/?page=3")
    assert [d.item.external_id for d in last.context["decisions"]] == ["vg4"]
    rejected = c.get(f"/projects/{project.id}/curation/?status=rejected")
    assert [d.item.external_id for d in rejected.context["decisions"]] == ["vg1", "vg3"]
    assert "?status=rejected&amp;page=2" in rejected.content.decode()
    second = c.get(f"/projects/{project.id}/curation/?status=rejected&page=2")
    assert [d.item.external_id for d in second.context["decisions"]] == ["vg4"]


def test_a_running_export_shows_its_percentage_and_stops_polling_when_done(project, researcher):
    from django.utils import timezone

    from curation.models import Export

    export = Export.objects.create(
        project=project, content="items", format="jsonl", status="running", progress=0.62, heartbeat_at=timezone.now()
    )
    c = client_for(researcher)
    url = f"/projects/{project.id}/curation/exports/{export.id}/"
    html = c.get(url, headers={"HX-Request": "true"}).content.decode()
    assert 'aria-valuenow="62"' in html and 'data-testid="export-percent">62%<' in html
    assert 'hx-trigger="every 1s"' in html
    Export.objects.filter(pk=export.pk).update(status="done", progress=1.0)
    done = c.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "progressbar" not in done and "hx-trigger" not in done
