"""Issue 12, findings 6 and 10: every upload (item import, revision import) goes through one
door: staged to disk chunk by chunk under ``MEDIA_ROOT/imports``, refused above
``HV_MAX_UPLOAD_BYTES`` (data and zip together), read as a stream, and deleted once the import
has ended (done or failed) or the upload was refused; nothing is left behind."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from kombu.exceptions import OperationalError

from annotation import importing, staging
from annotation.models import ImportJob, Item
from core.errors import DomainError
from curation import services as curation_services

from .factories import jsonl, make_project, png_bytes, turing_records, zip_of

pytestmark = pytest.mark.django_db


def staged(media_root) -> list[Path]:
    root = Path(media_root) / "imports"
    return sorted(root.rglob("*")) if root.exists() else []


def logged_in(user):
    from django.test import Client

    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def turing(researcher, annotators):
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators, k=1)
    assert importing.import_items(project=project, data=jsonl(turing_records(3)), data_format="jsonl").ok
    return project


# ------------------------------------------------------------------ finding 10: staged files go away
def test_a_finished_import_deletes_its_staged_upload(researcher, media_root):
    project = make_project("cqbench.turing", owner=researcher)
    job = importing.start_import(
        project=project,
        user=researcher,
        data_name="a.jsonl",
        data_stream=[jsonl(turing_records(2)).encode()],
        images_name="images.zip",
        images_stream=[zip_of({"unused.png": png_bytes()})],
    )
    assert job.status == ImportJob.Status.DONE and job.report["items_created"] == 2
    assert job.data_file and job.images_path  # the row still says what was imported
    assert not Path(job.data_file).exists() and not Path(job.images_path).exists()
    assert staged(media_root) == []


def test_a_refused_import_deletes_its_staged_upload(researcher, media_root):
    project = make_project("cqbench.turing", owner=researcher)
    job = importing.start_import(project=project, user=researcher, data_name="a.jsonl", data_stream=[b"{oops\n"])
    assert job.status == ImportJob.Status.FAILED and job.report["errors"][0].startswith("line 1:")
    assert staged(media_root) == []


@pytest.mark.parametrize(
    "images_name, images, message",
    [
        ("images.zip", b"x" * 200, "larger than"),  # the data fits; data + zip does not
        ("images.tar", b"x", "must be uploaded as a .zip"),
    ],
)
def test_a_refused_upload_leaves_nothing_staged(researcher, media_root, settings, images_name, images, message):
    settings.HV_MAX_UPLOAD_BYTES = 150
    project = make_project("cqbench.turing", owner=researcher)
    data = jsonl(turing_records(1)).encode()
    assert len(data) < 150
    with pytest.raises(DomainError, match=message):
        importing.start_import(
            project=project,
            user=researcher,
            data_name="a.jsonl",
            data_stream=[data],
            images_name=images_name,
            images_stream=[images],
        )
    assert staged(media_root) == [] and not ImportJob.objects.exists()


def test_an_oversized_data_file_leaves_nothing_staged(researcher, media_root, settings):
    settings.HV_MAX_UPLOAD_BYTES = 100
    project = make_project("cqbench.turing", owner=researcher)
    r = logged_in(researcher).post(
        f"/api/projects/{project.id}/import/",
        {"data": SimpleUploadedFile("a.jsonl", jsonl(turing_records(20)).encode())},
    )
    assert r.status_code == 400 and "larger than" in r.json()["detail"]
    assert staged(media_root) == [] and not Item.objects.exists()


def test_an_import_the_broker_refused_deletes_its_staged_upload(
    researcher, media_root, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    def boom(*args, **kwargs):
        raise OperationalError("Connection refused.")

    monkeypatch.setattr(Task, "delay", boom)
    settings.HV_INLINE_IMPORT_BYTES = 0
    project = make_project("cqbench.turing", owner=researcher)
    with django_capture_on_commit_callbacks(execute=True):
        job = importing.start_import(
            project=project, user=researcher, data_name="a.jsonl", data_stream=[jsonl(turing_records(1)).encode()]
        )
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED
    assert staged(media_root) == []


def test_a_queued_import_keeps_its_staged_upload_for_the_worker(
    researcher, media_root, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    sent = []
    monkeypatch.setattr(Task, "delay", lambda self, *a, **k: sent.append(a))
    settings.HV_INLINE_IMPORT_BYTES = 0
    project = make_project("cqbench.turing", owner=researcher)
    with django_capture_on_commit_callbacks(execute=True):
        job = importing.start_import(
            project=project, user=researcher, data_name="a.jsonl", data_stream=[jsonl(turing_records(1)).encode()]
        )
    assert sent == [(job.id,)] and Path(job.data_file).is_file()
    job = importing.run_import_job(job=ImportJob.objects.select_related("project").get(pk=job.pk))  # the worker
    assert job.status == ImportJob.Status.DONE and staged(media_root) == []


def test_discarding_never_leaves_the_staging_folder(researcher, media_root, tmp_path):
    outside = tmp_path / "mine"
    outside.mkdir()
    (outside / "data.jsonl").write_text("{}\n")
    job = ImportJob(project=make_project("cqbench.turing", owner=researcher), data_file=str(outside / "data.jsonl"))
    staging.discard_job_upload(job)
    assert (outside / "data.jsonl").is_file()


# ------------------------------------------------------------------ finding 6: revision uploads
def _revision(turing, i: int, text: str = "revised") -> dict:
    item = Item.objects.get(project=turing, external_id=f"t{i}")
    return {"id": item.external_id, **item.data, "human_utterance": text}


def test_an_oversized_revision_upload_is_refused_over_the_api(turing, researcher, media_root, settings):
    data = jsonl([_revision(turing, i) for i in range(3)]).encode()
    settings.HV_MAX_UPLOAD_BYTES = len(data) - 1
    r = logged_in(researcher).post(
        f"/api/projects/{turing.id}/revisions/import/", {"data": SimpleUploadedFile("rev.jsonl", data)}
    )
    assert r.status_code == 400 and "larger than" in r.json()["detail"], r.content
    assert not Item.objects.filter(project=turing, version=2).exists() and staged(media_root) == []
    settings.HV_MAX_UPLOAD_BYTES = len(data)  # exactly the limit is fine
    r = logged_in(researcher).post(
        f"/api/projects/{turing.id}/revisions/import/", {"data": SimpleUploadedFile("rev.jsonl", data)}
    )
    assert r.status_code == 201 and r.json()["items_created"] == 3, r.content
    assert staged(media_root) == []


def test_the_revision_limit_counts_data_and_zip_together(turing, researcher, media_root, settings):
    data = jsonl([_revision(turing, 0)]).encode()
    settings.HV_MAX_UPLOAD_BYTES = len(data) + 10
    r = logged_in(researcher).post(
        f"/api/projects/{turing.id}/revisions/import/",
        {"data": SimpleUploadedFile("rev.jsonl", data), "images": SimpleUploadedFile("i.zip", b"z" * 11)},
    )
    assert r.status_code == 400 and "larger than" in r.json()["detail"]
    assert staged(media_root) == []


def test_an_oversized_revision_upload_is_refused_on_the_page(turing, researcher, media_root, settings):
    data = jsonl([_revision(turing, i) for i in range(3)]).encode()
    settings.HV_MAX_UPLOAD_BYTES = 10
    c = logged_in(researcher)
    r = c.post(
        f"/projects/{turing.id}/curation/revisions/", {"data": SimpleUploadedFile("rev.jsonl", data)}, follow=True
    )
    assert r.status_code == 200 and b"larger than 10 bytes" in r.content
    assert not Item.objects.filter(project=turing, version=2).exists() and staged(media_root) == []


def test_a_revision_upload_on_the_page_is_imported_and_its_file_deleted(turing, researcher, media_root):
    data = jsonl([_revision(turing, 1)]).encode()
    r = logged_in(researcher).post(
        f"/projects/{turing.id}/curation/revisions/", {"data": SimpleUploadedFile("rev.jsonl", data)}, follow=True
    )
    assert b"1 revised item(s) imported" in r.content
    assert Item.objects.get(project=turing, external_id="t1", version=2).data["human_utterance"] == "revised"
    assert staged(media_root) == []


# SQLite's driver keeps the inserted rows' text in memory: the bound holds for PostgreSQL's COPY
@pytest.mark.postgres
def test_a_revision_file_is_streamed_not_held_in_memory(turing, tmp_path):
    """Peak Python memory of a revision import stays far below the file's size: the file is read
    line by line twice (check, then write) instead of read, decoded and parsed as a whole."""
    assert importing.import_items(project=turing, data=jsonl(turing_records(147, start=3)), data_format="jsonl").ok
    big = "x" * 90_000  # under the 100,000-character field limit
    path = tmp_path / "rev.jsonl"
    with open(path, "w") as fh:
        for i in range(150):
            fh.write(json.dumps(_revision(turing, i, big + str(i))) + "\n")
    size = path.stat().st_size
    assert size > 13_000_000
    tracemalloc.start()
    try:
        report = curation_services.import_revisions(project=turing, data=path)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok and report.items_created == 150, report.errors
    assert Item.objects.get(project=turing, external_id="t149", version=2).data["human_utterance"] == big + "149"
    # reading it whole needs the bytes, the text and the parsed records: > 3x the size
    assert peak < size / 4, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"


def test_a_file_that_is_not_utf8_is_refused_with_the_byte(turing, tmp_path):
    path = tmp_path / "rev.jsonl"
    head = (json.dumps(_revision(turing, 0)) + "\n").encode()
    path.write_bytes(head + b'{"id": "t1", "human_utterance": "\xff"}\n')
    report = curation_services.import_revisions(project=turing, data=path)
    assert not report.ok and report.errors == [f"the file is not UTF-8 text (byte {len(head) + 33})"]
    report = importing.import_items(project=turing, data=path.read_bytes(), data_format="jsonl")
    assert report.errors == [f"the file is not UTF-8 text (byte {len(head) + 33})"]
