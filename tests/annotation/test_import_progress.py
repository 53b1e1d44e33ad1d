"""An import says how far it is: ``import_items`` reports the share checked, then written; on a
worker the job's report holds that progress (written by ``core.progress.ProgressWriter`` on its
own connection, so it shows even while the rows are written in one transaction); the status part
shows a bar with the percentage while the job runs and the report once it ended."""

from __future__ import annotations

import time

import pytest
from django.db import transaction
from django.test import Client

from annotation import importing, staging
from annotation.models import ImportJob
from core.progress import ProgressWriter

from .factories import jsonl, make_project, turing_records


def wait_for(check, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail("the condition did not hold in time")


@pytest.mark.django_db
def test_import_items_reports_checking_then_writing(researcher, monkeypatch):
    monkeypatch.setattr(staging, "PROGRESS_TICK", 0.0)  # every line reports
    project = make_project("cqbench.turing", owner=researcher)
    seen: list[tuple[float, str]] = []
    data = jsonl(turing_records(200)).encode()
    report = importing.import_items(
        project=project, data=data, data_format="jsonl", progress=lambda f, phase: seen.append((f, phase))
    )
    assert report.ok and report.items_created == 200
    phases = [phase for _f, phase in seen]
    assert phases[0] == "checking" and phases[-1] == "writing"
    assert phases == sorted(phases, key=["checking", "writing"].index)  # checking, then writing
    fractions = [f for f, _phase in seen]
    assert fractions == sorted(fractions) and fractions[0] >= 0 and fractions[-1] < 1
    checking = [f for f, phase in seen if phase == "checking"]
    writing = [f for f, phase in seen if phase == "writing"]
    assert max(checking) <= importing.CHECK_SHARE < max(writing)
    assert len(set(checking)) > 1 and len(set(writing)) > 1  # it moves within each pass


@pytest.mark.postgres  # a second connection writes beside an open transaction: SQLite locks the file
@pytest.mark.django_db(transaction=True)
def test_progress_is_written_beside_an_open_transaction_and_never_over_an_outcome(researcher):
    project = make_project("cqbench.turing", owner=researcher)
    job = ImportJob.objects.create(project=project, data_file="x", data_format="jsonl", status="running", attempts=1)

    def stored() -> dict:
        return ImportJob.objects.get(pk=job.pk).report

    with ProgressWriter(ImportJob, job.pk, attempt=1, fields=staging.progress_report, interval=0.02) as writer:
        writer.set(0.3, "checking")
        wait_for(lambda: stored().get("progress") == 0.3)
        with transaction.atomic():  # as the import's write phase: its own connection commits at once
            writer.set(0.75, "writing")
            wait_for(lambda: stored() == {"progress": 0.75, "phase": "writing"})
        ImportJob.objects.filter(pk=job.pk).update(status="done", report={"ok": True, "items_created": 3})
        writer.set(0.9, "writing")
        assert writer.write() is False  # an ended job keeps its outcome
        assert stored() == {"ok": True, "items_created": 3}

    other = ImportJob.objects.create(project=project, data_file="x", data_format="jsonl", status="running", attempts=2)
    stale = ProgressWriter(ImportJob, other.pk, attempt=1, fields=staging.progress_report)
    stale.set(0.5)
    assert stale.write() is False  # a worker whose claim was handed on writes nothing
    assert ImportJob.objects.get(pk=other.pk).report == {}


@pytest.mark.django_db
def test_status_part_shows_the_percentage_while_running_and_the_report_after(researcher):
    project = make_project("cqbench.turing", owner=researcher)
    job = ImportJob.objects.create(
        project=project,
        data_file="x",
        data_format="jsonl",
        original_name="big.jsonl",
        status="running",
        report={"progress": 0.4237, "phase": "writing"},
    )
    assert job.percent == 42
    c = Client()
    c.force_login(researcher)
    running = c.get(f"/imports/{job.id}/", headers={"HX-Request": "true"}).content.decode()
    assert 'role="progressbar"' in running and 'aria-valuenow="42"' in running
    assert 'data-testid="import-percent">42%<' in running and 'style="width: 42%"' in running
    assert 'hx-trigger="every 1s"' in running and "Writing the items." in running
    assert "Nothing was imported" not in running  # progress is not a refused report
    assert c.get(f"/api/imports/{job.id}/").json()["percent"] == 42

    ImportJob.objects.filter(pk=job.pk).update(
        status="done",
        report={"ok": True, "items_created": 5, "lines_read": 5, "images_stored": 0, "images_reused": 0},
    )
    done = c.get(f"/imports/{job.id}/", headers={"HX-Request": "true"}).content.decode()
    assert "progressbar" not in done and "hx-trigger" not in done and "Imported 5 items" in done
    assert c.get(f"/api/imports/{job.id}/").json()["percent"] == 100


@pytest.mark.django_db
def test_a_started_import_starts_from_zero(researcher):
    from core import jobs

    project = make_project("cqbench.turing", owner=researcher)
    job = ImportJob.objects.create(
        project=project, data_file="x", data_format="jsonl", report={"progress": 0.8, "phase": "writing"}
    )
    assert jobs.start(job)  # e.g. re-queued by the reaper after its worker died at 80%
    assert job.report == {"progress": 0.0, "phase": "checking"} and job.percent == 0
