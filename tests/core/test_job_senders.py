"""One sender per job (issue 32): the app's tasks module says how a job of its type goes to the
broker (``core.jobs.register_sender``); the services, on commit, and the reaper send through it,
and no model imports its task or says how it is sent."""

from __future__ import annotations

import pytest
from celery.app.task import Task
from django.db import transaction
from kombu.exceptions import OperationalError

from agreement import services as agreement_services
from agreement.models import AgreementReport
from agreement.services import ReportParams
from annotation.models import ImportJob
from annotation.staging import staging_root
from core import jobs, reaper
from curation import services as curation_services
from curation.models import Export
from tests.annotation.factories import jsonl, make_project, make_user, turing_records
from tests.benchmarks.test_lazy_tables import run_python

JOB_MODELS = {"ImportJob", "AnnotationImport", "JudgeOutputImport", "AgreementReport", "Export", "JudgeRun"}


def test_every_job_model_is_sent_by_its_own_apps_tasks_module():
    models = reaper.job_models()
    assert {m.__name__ for m in models} >= JOB_MODELS
    for model in models:
        assert jobs.sender_for(model).send.__module__ == f"{model._meta.app_config.name}.tasks", model
        assert not hasattr(model, "send"), f"{model.__name__} says how it is sent: its tasks module does"


def test_a_process_loads_an_apps_tasks_module_when_it_first_sends_its_job():
    """The web process reaps (and sends) without having imported any tasks module at startup,
    which would load numpy and pandas (tests/benchmarks/test_lazy_tables.py)."""
    r = run_python(
        "import sys, django; django.setup(); from core import jobs; from curation.models import Export; "
        "before = 'curation.tasks' in sys.modules; sender = jobs.sender_for(Export); "
        "print(before, 'curation.tasks' in sys.modules, sender.send.__name__)"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "send_export"]


def test_the_sender_is_found_through_the_bases_and_there_is_one_per_type():
    class Base:
        pass

    class Child(Base):
        pass

    class Unrelated:
        pass

    def send_base(job: Base) -> None:
        pass

    def send_other(job: Base) -> None:
        pass

    jobs.register_sender(Base, send_base)
    assert jobs.sender_for(Child).send is send_base
    jobs.register_sender(Base, send_base)  # the same module imported again: the same sender
    with pytest.raises(ValueError, match="one sender per job"):
        jobs.register_sender(Base, send_other)
    assert jobs.sender_for(Base).send is send_base
    with pytest.raises(jobs.NoSender, match="no sender is registered for Unrelated"):
        jobs.sender_for(Unrelated)


@pytest.fixture
def project(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user("owner", researcher=True)
    return make_project("cqbench.turing", owner=owner), owner


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, tuple]]:
    """What the broker is handed: (task name, arguments)."""
    calls: list[tuple[str, tuple]] = []
    monkeypatch.setattr(Task, "delay", lambda self, *args: calls.append((self.name, args)))
    return calls


@pytest.mark.django_db
def test_a_job_is_sent_once_through_its_sender_when_the_request_commits(
    project, sent, django_capture_on_commit_callbacks
):
    p, owner = project
    with django_capture_on_commit_callbacks() as on_commit:
        export = curation_services.start_export(project=p, user=owner, content="items", format="jsonl", scope="all")
        report = agreement_services.start_report(project=p, params=ReportParams(bootstrap=0), user=owner)
    assert sent == []  # nothing before the commit: a worker would not find the rows
    for callback in on_commit:
        callback()
    assert sent == [("curation.run_export", (export.pk,)), ("agreement.run_agreement_report", (report.pk,))]
    assert Export.objects.get(pk=export.pk).status == AgreementReport.objects.get(pk=report.pk).status == "queued"


@pytest.mark.django_db
def test_a_job_the_broker_refuses_fails_with_why_and_is_cleaned_up(
    project, monkeypatch, django_capture_on_commit_callbacks
):
    """Through the registered sender (no sender passed): the import fails with the reason and
    its staged upload is deleted by the cleanup registered with the sender."""

    def refuse(self, *args):
        raise OperationalError("Connection refused.")

    monkeypatch.setattr(Task, "delay", refuse)
    p, owner = project
    folder = staging_root() / "refused-upload"
    folder.mkdir(parents=True)
    (folder / "data.jsonl").write_text(jsonl(turing_records(1)))
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        job = ImportJob.objects.create(
            project=p, created_by=owner, data_file=str(folder / "data.jsonl"), data_format="jsonl"
        )
        jobs.enqueue_on_commit(job)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED
    assert (
        "task queue could not be reached" in job.report["errors"][0] and "Connection refused" in job.report["errors"][0]
    )
    assert not folder.exists()
