"""When the broker cannot take a task, the job says why and is not left queued for ever."""

from __future__ import annotations

import pytest
from kombu.exceptions import OperationalError

from agreement import services as agreement_services
from agreement.models import AgreementReport
from agreement.services import ReportParams
from annotation import importing
from annotation.models import ImportJob
from curation import services as curation_services
from curation.models import Export
from judges import configuration, runs
from judges.models import JudgeRun
from tests.annotation.factories import jsonl, make_project, make_user, turing_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def refused(monkeypatch):
    """Every task send fails as when the broker is down."""

    def boom(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    from celery.app.task import Task

    monkeypatch.setattr(Task, "apply_async", boom)
    monkeypatch.setattr(Task, "delay", boom)


@pytest.fixture
def project(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user("owner", researcher=True)
    p = make_project("cqbench.story", owner=owner, annotators=[make_user("a1")])
    return p, owner


def _why(text: str) -> None:
    assert "task queue could not be reached" in text and "Connection refused" in text


def test_import_fails_with_the_reason(refused, project, settings, django_capture_on_commit_callbacks):
    settings.HV_INLINE_IMPORT_BYTES = 0  # force the worker path
    p, owner = project
    with django_capture_on_commit_callbacks(execute=True):
        job = importing.start_import(
            project=p, user=owner, data_name="x.jsonl", data_stream=[jsonl(turing_records(1)).encode()]
        )
    job = ImportJob.objects.get(pk=job.pk)
    assert job.status == ImportJob.Status.FAILED and job.finished_at is not None
    _why(job.report["errors"][0])


def test_judge_run_fails_with_the_reason(refused, project, django_capture_on_commit_callbacks):
    p, owner = project
    from benchmarks.registry import get_preset

    records = get_preset("cqbench.story").demo_items(None)[:2]
    assert importing.import_items(project=p, data=jsonl(records), data_format="jsonl").ok
    config = configuration.create_judge_config(project=p, name="minilm", backend="embedding")
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.start_judge_run(config=config, user=owner)
    run = JudgeRun.objects.get(pk=run.pk)
    assert run.status == JudgeRun.Status.FAILED
    _why(run.message)


def test_export_fails_with_the_reason(refused, project, django_capture_on_commit_callbacks):
    p, owner = project
    with django_capture_on_commit_callbacks(execute=True):
        export = curation_services.start_export(
            project=p, user=owner, content="annotations", format="jsonl", scope="all"
        )
    export = Export.objects.get(pk=export.pk)
    assert export.status == Export.Status.FAILED
    _why(export.message)


def test_agreement_report_job_fails_with_the_reason(refused, project, django_capture_on_commit_callbacks):
    p, owner = project
    with django_capture_on_commit_callbacks(execute=True):
        job = agreement_services.start_report(project=p, params=ReportParams(bootstrap=0), user=owner)
    job = AgreementReport.objects.get(pk=job.pk)
    assert job.status == AgreementReport.Status.FAILED
    _why(job.message)
