"""Imports handed to a real Celery worker: the web/API path (``start_import``) stages the
files under MEDIA_ROOT/imports, creates the job and, above HV_INLINE_IMPORT_BYTES, enqueues
``annotation.tasks.run_import`` on commit; the worker subprocess (Redis broker, the same
PostgreSQL test database) runs it and stores the report."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation import importing
from annotation.models import AnnotationImport, Asset, Assignment, ImportJob, Item

from .factories import jsonl, make_project, png_bytes, turing_records, zip_of

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

WAIT_S = 60


@pytest.fixture
def media_root(settings):
    """Overrides the package's per-test MEDIA_ROOT: the worker subprocess was started with the
    process environment, so both sides must use the MEDIA_ROOT that environment gives
    (scripts/test sets MEDIA_ROOT to a temporary folder)."""
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def via_worker(settings):
    settings.HV_INLINE_IMPORT_BYTES = 0  # every upload goes to the worker


def wait_finished(job: ImportJob, worker) -> ImportJob:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in (ImportJob.Status.DONE, ImportJob.Status.FAILED):
            return job
        if not worker.alive:
            pytest.fail(f"celery worker died; log:\n{worker.log_tail()}", pytrace=False)
        time.sleep(0.2)
    pytest.fail(
        f"import job {job.id} still {job.status!r} after {WAIT_S}s; worker log:\n{worker.log_tail()}", pytrace=False
    )


def start(project, user, name: str, data: bytes, images: bytes | None = None) -> ImportJob:
    job = importing.start_import(
        project=project,
        user=user,
        data_name=name,
        data_stream=[data],
        images_name="images.zip" if images is not None else None,
        images_stream=[images] if images is not None else None,
    )
    # handed over, not run inside the request
    assert job.status == ImportJob.Status.QUEUED and job.finished_at is None
    staged = Path(job.data_file)
    assert staged.is_relative_to(Path(django_settings.MEDIA_ROOT) / "imports")
    # staged until the job ends: a warm worker may already have run it and discarded the upload
    # (the job ends before its upload goes, so a file gone means an ended job)
    present = staged.is_file()
    job.refresh_from_db()
    assert present or job.status in (ImportJob.Status.DONE, ImportJob.Status.FAILED)
    return job


def test_media_root_is_the_one_the_worker_uses(media_root, celery_worker_process):
    import os

    expected = os.environ.get("MEDIA_ROOT") or str(
        Path(os.environ.get("HV_VAR_DIR", Path(django_settings.BASE_DIR) / "var")) / "media"
    )
    assert Path(media_root) == Path(expected)


def test_jsonl_import_runs_on_the_worker(celery_worker_process, researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=2)
    job = start(project, researcher, "turing.jsonl", jsonl(turing_records(4)).encode())

    job = wait_finished(job, celery_worker_process)
    assert job.status == ImportJob.Status.DONE, job.report
    assert job.finished_at is not None
    assert job.report["ok"] is True
    assert job.report["items_created"] == 4 and job.report["assignments_created"] == 8
    assert job.report["errors"] == []
    assert sorted(Item.objects.filter(project=project).values_list("external_id", flat=True)) == [
        "t0",
        "t1",
        "t2",
        "t3",
    ]
    assert Assignment.objects.filter(project=project).count() == 8
    for a in Assignment.objects.filter(project=project):
        assert sorted(a.presentation["pair_order"]["human_written"]) == ["human_utterance", "model_utterance"]
    assert "annotation.run_import[" in celery_worker_process.log_text()


def test_import_with_images_stores_files_where_the_web_side_reads_them(celery_worker_process, researcher, annotators):
    rng = random.Random()
    images, records = {}, []
    for i in range(2):  # fresh colours: content hashes nobody stored before
        for side in ("a", "b"):
            images[f"img/{side}{i}.png"] = png_bytes((rng.randrange(256), rng.randrange(256), rng.randrange(256)))
        records.append(
            {
                "id": f"vg{i}",
                "question": "How important is family?",
                "option_a": "Very",
                "option_b": "Not at all",
                "image_a": f"img/a{i}.png",
                "image_b": f"img/b{i}.png",
                "generator": "gpt",
                "country": "China",
            }
        )
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators, k=2)
    job = start(project, researcher, "vg.jsonl", jsonl(records).encode(), images=zip_of(images))

    job = wait_finished(job, celery_worker_process)
    assert job.status == ImportJob.Status.DONE, job.report
    assert job.report["items_created"] == 2
    assets = Asset.objects.filter(items__project=project).distinct()
    assert assets.count() == len(set(images.values())) == job.report["images_stored"]
    root = Path(django_settings.MEDIA_ROOT)
    from django.test import Client

    web = Client()
    web.force_login(researcher)
    for asset in assets:
        assert (root / asset.relative_path()).is_file(), "the worker wrote the image outside MEDIA_ROOT"
        # The web side serves the worker's file and makes the thumbnail on first request.
        assert web.get(f"/assets/{asset.sha256}/").status_code == 200
        assert web.get(f"/assets/{asset.sha256}/thumb/").status_code == 200
        assert (root / asset.thumbnail_path()).is_file()


def test_failing_import_on_the_worker_reports_the_line_and_writes_nothing(
    celery_worker_process, researcher, annotators
):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=2)
    data = jsonl(turing_records(2)) + "{not json\n" + jsonl(turing_records(2, start=10))
    job = start(project, researcher, "broken.jsonl", data.encode())

    job = wait_finished(job, celery_worker_process)
    assert job.status == ImportJob.Status.FAILED
    assert job.finished_at is not None
    assert job.report["ok"] is False
    assert job.report["items_created"] == 0
    assert len(job.report["errors"]) == 1
    assert job.report["errors"][0].startswith("line 3: invalid JSON")
    assert not Item.objects.filter(project=project).exists()
    assert not Assignment.objects.filter(project=project).exists()


def test_a_large_annotation_preview_runs_on_the_worker_and_its_page_shows_the_preview(
    celery_worker_process, researcher, media_root
):
    """Issue 37, M3: the preview of a file above HV_INLINE_IMPORT_BYTES is a job the worker runs
    (it ran inside the web request and a 145 MB file killed the web worker); its page shows the
    preview when the worker is done, and the upload stays for Confirm."""
    project = make_project("cqbench.turing", owner=researcher)
    assert importing.import_items(project=project, data=jsonl(turing_records(3)), data_format="jsonl").ok
    export = [
        {
            "id": i,
            "data": {"id": f"t{i}"},
            "annotations": [
                {
                    "id": 10 * i + r,
                    "completed_by": r,
                    "result": [{"from_name": "human_written", "type": "choices", "value": {"choices": ["left"]}}],
                }
                for r in (1, 2)
            ],
        }
        for i in range(3)
    ]
    client = Client()
    client.force_login(researcher)
    resp = client.post(
        reverse("annotation_import_preview", args=[project.id]),
        {"format": "labelstudio", "item_key": "id", "mapping": "", "file": _upload("ls.json", json.dumps(export))},
    )
    job = AnnotationImport.objects.get(project=project, preview=True)
    assert resp.status_code == 302 and resp["Location"] == reverse("annotation_import_detail", args=[job.id])
    job = wait_finished(job, celery_worker_process)
    assert job.status == "done", job.report
    assert job.report["ok"] and job.report["annotations_read"] == 6 and job.report["raters"] == 2
    page = client.get(resp["Location"])
    assert page.status_code == 200 and b'data-testid="annotation-import-preview"' in page.content
    assert b"annotations 6" in page.content and page.context["staged"]["format"] == "labelstudio"
    assert Path(job.data_file).is_file()  # kept for Confirm


def _upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="application/json")
