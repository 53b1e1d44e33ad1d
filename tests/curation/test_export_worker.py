"""An export produced by a real Celery worker (Redis broker, the PostgreSQL test database):
started through the API, polled until done, downloaded and compared with the database."""

from __future__ import annotations

import io
import time

import pandas as pd
import pytest
from django.test import Client

from annotation.models import Item
from curation import services
from curation.models import Export

from .helpers import FAIL, PASS, REJECT, submit_all, valueground_project

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

WAIT_S = 60


@pytest.fixture
def media_root(settings):
    """The worker subprocess uses the environment's MEDIA_ROOT: keep it (no per-test folder)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings.MEDIA_ROOT


def wait_done(export_id: int, worker) -> Export:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        export = Export.objects.get(pk=export_id)
        if export.status in (Export.Status.DONE, Export.Status.FAILED):
            return export
        if not worker.alive:
            pytest.fail(f"celery worker died; log:\n{worker.log_tail()}", pytrace=False)
        time.sleep(0.2)
    pytest.fail(f"export {export_id} not finished after {WAIT_S}s; worker log:\n{worker.log_tail()}", pytrace=False)


def test_worker_exports_accepted_items_and_annotations(celery_worker_process, researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=4, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {items[0].id: PASS, items[1].id: PASS, items[2].id: FAIL, items[3].id: REJECT}
    submit_all(project, lambda item, rater: plan[item.id])
    services.apply_policy(project=project, user=researcher)
    client = Client()
    client.force_login(researcher)

    r = client.post(
        f"/api/projects/{project.id}/exports/",
        {"content": "items", "format": "parquet"},
        content_type="application/json",
    )
    assert r.status_code == 202 and r.json()["status"] == "queued"
    export = wait_done(r.json()["id"], celery_worker_process)
    assert export.status == "done", export.message
    body = client.get(f"/api/exports/{export.id}/").json()
    assert body["progress"] == 1.0 and body["files"][0]["rows"] == 2
    df = pd.read_parquet(io.BytesIO(b"".join(client.get(body["download_url"]).streaming_content)))
    assert sorted(df["id"]) == sorted(i.external_id for i in items[:2])
    assert list(df["status"]) == ["accepted", "accepted"]

    r = client.post(
        f"/api/projects/{project.id}/exports/",
        {"content": "annotations", "format": "csv", "scope": "all"},
        content_type="application/json",
    )
    export = wait_done(r.json()["id"], celery_worker_process)
    assert export.status == "done", export.message
    csv = pd.read_csv(io.BytesIO(b"".join(client.get(f"/api/exports/{export.id}/download/").streaming_content)))
    assert set(csv["item"]) == {i.external_id for i in items} and csv["rater"].nunique() == 3
    assert csv[csv["field"] == "q4"].groupby("item")["value_num"].min().to_dict() == {
        i.external_id: (0 if plan[i.id] is FAIL else 1) for i in items
    }
