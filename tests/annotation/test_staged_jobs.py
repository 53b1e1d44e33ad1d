"""One staged-upload job for every import of a file (``annotation.staging``, issue 32): the item
import, the import of annotations made elsewhere and the import of a judge's outputs made
elsewhere are staged through the same door, started, sent, refused by a broker, run and reaped
by the same skeleton."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from kombu.exceptions import OperationalError

from annotation import annotation_import, importing
from annotation.models import AnnotationImport, ImportJob
from core import jobs, reaper
from core.errors import DomainError
from judges import imported
from judges.models import JudgeOutputImport
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


def judge_outputs(n: int = 2) -> bytes:
    return "".join(f'{{"id": "vg{i}", "q1": 2, "q2": 1, "q3": 2, "q4": 1}}\n' for i in range(n)).encode()


def start_judge_outputs(researcher, tmp_path):
    project = valueground_project(researcher, [], tmp_path / "img", n=2, k=1)
    return imported.import_upload(
        project=project, upload=SimpleUploadedFile("out.jsonl", judge_outputs()), fields={"name": "j"}, user=researcher
    )


STARTS = {"items": start_items, "annotations": start_annotations, "judge outputs": start_judge_outputs}
RUNS = {
    ImportJob: importing.run_import_job,
    AnnotationImport: annotation_import.run_annotation_import_job,
    JudgeOutputImport: imported.run_judge_import_job,
}
TASKS = {
    "items": "annotation.run_import",
    "annotations": "annotation.run_annotation_import",
    "judge outputs": "judges.run_output_import",
}


@pytest.mark.parametrize("kind", sorted(STARTS))
def test_a_refused_send_fails_the_job_and_discards_its_upload(
    kind, researcher, media_root, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    def boom(*args, **kwargs):
        raise OperationalError("Connection refused.")

    monkeypatch.setattr(Task, "delay", boom)
    with django_capture_on_commit_callbacks(execute=True):
        job = STARTS[kind](researcher, *([] if kind == "items" else [tmp_path]))
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
        job = STARTS[kind](researcher, *([] if kind == "items" else [tmp_path]))
    # handed over through the sender its app's tasks module registers, the one place a job type names its task
    assert sent == [(TASKS[kind], (job.id,))] and job.status == "queued" and Path(job.data_file).is_file()
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


def test_a_refused_judge_outputs_upload_leaves_nothing(researcher, media_root, tmp_path, settings):
    """Refused before a job is made (a taken name, too large): the staged upload goes at once."""
    project = valueground_project(researcher, [], tmp_path / "img", n=2, k=1)
    settings.HV_INLINE_IMPORT_BYTES = 10_000
    job = start_judge_outputs_into(project, researcher, "j")
    assert job.status == "done" and job.report["items"] == 2, job.report
    assert staged(media_root) == []
    with pytest.raises(DomainError, match="already has a judge named 'j'"):
        start_judge_outputs_into(project, researcher, "j")
    assert staged(media_root) == []
    settings.HV_MAX_UPLOAD_BYTES = len(judge_outputs()) - 1
    with pytest.raises(DomainError, match="upload larger than"):
        start_judge_outputs_into(project, researcher, "k")
    assert staged(media_root) == []
    assert JudgeOutputImport.objects.filter(project=project).count() == 1


def start_judge_outputs_into(project, researcher, name):
    upload = SimpleUploadedFile("out.jsonl", judge_outputs())
    return imported.import_upload(project=project, upload=upload, fields={"name": name}, user=researcher)


@pytest.mark.parametrize("file_there", [True, False], ids=["re-queued", "failed"])
def test_a_judge_outputs_import_whose_worker_died_is_reaped(
    file_there, researcher, media_root, tmp_path, monkeypatch, settings, django_capture_on_commit_callbacks
):
    """Its rows and "done" are one commit, so a killed worker wrote nothing: the reaper runs it
    again from its staged file while that is there, else fails it and cleans up."""
    from datetime import timedelta

    from celery.app.task import Task
    from django.utils import timezone

    sent = []
    monkeypatch.setattr(Task, "delay", lambda self, *a, **k: sent.append((self.name, a)))
    with django_capture_on_commit_callbacks(execute=True):
        job = start_judge_outputs(researcher, tmp_path)
    sent.clear()
    long_ago = timezone.now() - timedelta(seconds=settings.HV_JOB_LEASE_SECONDS * 10)
    JudgeOutputImport.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=long_ago)
    if not file_there:
        Path(job.data_file).unlink()
    job.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        outcome = reaper.reap_job(job)
    job.refresh_from_db()
    if file_there:
        assert outcome == "requeued" and job.status == "queued" and sent == [("judges.run_output_import", (job.id,))]
        job = imported.run_judge_import_job(job=job)  # the worker it was sent to
        assert job.status == "done" and job.report["items"] == 2 and job.rater is not None
    else:
        assert outcome == "failed" and job.status == "failed" and sent == []
        assert "its uploaded file is gone" in job.report["errors"][0] and job.report["items"] == 0
    assert staged(media_root) == []
