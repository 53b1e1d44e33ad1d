"""One staged-upload job for every import of a file (``annotation.staging``, issue 32): the item
import and the import of annotations made elsewhere are started, sent, refused by a broker,
run and reaped by the same skeleton, and a judge's outputs are staged through the same door."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from kombu.exceptions import OperationalError

from annotation import annotation_import, importing
from annotation.models import AnnotationImport, ImportJob
from core import jobs
from core.errors import DomainError
from judges import imported
from tests.annotation.factories import jsonl, make_project, turing_records
from tests.annotation.test_import_annotations import LS
from tests.curation.helpers import valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.HV_INLINE_IMPORT_BYTES = 0  # every import goes to a worker
    return settings.MEDIA_ROOT


def staged(media_root) -> list[Path]:
    root = Path(media_root) / "imports"
    return sorted(root.iterdir()) if root.is_dir() else []


def start_items(researcher):
    project = make_project("cqbench.turing", owner=researcher)
    return importing.start_import(
        project=project, user=researcher, data_name="a.jsonl", data_stream=[jsonl(turing_records(1)).encode()]
    )


def start_annotations(researcher, tmp_path):
    project = valueground_project(researcher, [], tmp_path / "img", n=2, k=1)
    upload = annotation_import.stage_annotations(
        project=project, user=researcher, name="export.json", chunks=[LS.read_bytes()], data_format="labelstudio"
    )
    return annotation_import.start_annotation_import(
        project=project,
        user=researcher,
        path=upload.path,
        original_name="export.json",
        data_format="labelstudio",
        item_key="id",
        mapping={"quality": "q3"},
    )


STARTS = {"items": start_items, "annotations": start_annotations}
RUNS = {ImportJob: importing.run_import_job, AnnotationImport: annotation_import.run_annotation_import_job}


@pytest.mark.parametrize("kind", sorted(STARTS))
def test_a_refused_send_fails_the_job_and_discards_its_upload(
    kind, researcher, media_root, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    def boom(*args, **kwargs):
        raise OperationalError("Connection refused.")

    monkeypatch.setattr(Task, "delay", boom)
    with django_capture_on_commit_callbacks(execute=True):
        job = STARTS[kind](researcher, *([tmp_path] if kind == "annotations" else []))
    job.refresh_from_db()
    assert job.status == "failed" and "task queue could not be reached" in job.report["errors"][0]
    assert job.report[job.written_key] == 0
    assert staged(media_root) == []


@pytest.mark.parametrize("kind", sorted(STARTS))
def test_a_sent_job_keeps_its_upload_until_its_worker_ends_it(
    kind, researcher, media_root, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    sent = []
    monkeypatch.setattr(Task, "delay", lambda self, *a, **k: sent.append((self.name, a)))
    with django_capture_on_commit_callbacks(execute=True):
        job = STARTS[kind](researcher, *([tmp_path] if kind == "annotations" else []))
    # handed over through the sender annotation.tasks registers, the one place a job type names its task
    task = {"items": "annotation.run_import", "annotations": "annotation.run_annotation_import"}[kind]
    assert sent == [(task, (job.id,))] and job.status == "queued" and Path(job.data_file).is_file()
    assert job.percent == 0
    job = RUNS[type(job)](job=type(job).objects.select_related("project").get(pk=job.pk))  # the worker
    assert job.status == "done", job.report
    assert job.report[job.written_key] > 0 and job.percent == 100
    assert staged(media_root) == []


def test_a_reaped_annotation_import_whose_upload_is_gone_is_failed_and_cleaned(researcher, media_root, tmp_path):
    project = valueground_project(researcher, [], tmp_path / "img", n=2, k=1)
    upload = annotation_import.stage_annotations(
        project=project, user=researcher, name="export.json", chunks=[LS.read_bytes()], data_format="labelstudio"
    )
    job = AnnotationImport.objects.create(project=project, data_file=str(upload.path), data_format="labelstudio")
    assert job.resume_blocker() is None  # its file is there: the reaper may run it again
    jobs.clean_up(job)  # what the reaper runs when it fails a job from outside its run
    assert staged(media_root) == []
    assert job.resume_blocker() == "its uploaded file is gone: upload it again"


def test_a_judges_outputs_upload_goes_through_the_staging_door_and_leaves_nothing(
    researcher, media_root, tmp_path, settings
):
    project = valueground_project(researcher, [], tmp_path / "img", n=2, k=1)
    text = "".join(f'{{"id": "vg{i}", "q1": 2, "q2": 1, "q3": 2, "q4": 1}}\n' for i in range(2)).encode()
    report = imported.import_upload(
        project=project, upload=SimpleUploadedFile("out.jsonl", text), fields={"name": "j"}, user=researcher
    )
    assert report.ok and report.items == 2, report.errors
    assert staged(media_root) == []
    settings.HV_MAX_UPLOAD_BYTES = len(text) - 1
    with pytest.raises(DomainError, match="upload larger than"):
        imported.import_upload(project=project, upload=SimpleUploadedFile("out.jsonl", text), fields={"name": "k"})
    assert staged(media_root) == []
