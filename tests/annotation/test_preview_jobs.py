"""A preview of a file above ``HV_INLINE_IMPORT_BYTES`` is a job on a worker (issue 37, M3), never
work inside the web request: the page redirects to the job's page, which shows its progress and
then the same preview (mapping, counts, problems, the mapping editable, Confirm); the API answers
202 with the job. A preview job is no import: it writes nothing, claims no file, is no earlier
import of the same file and is not listed among the project's imports; the page's keeps its
upload for Confirm, the API's drops it once it has ended. Here the broker is replaced by a list
of the tasks sent, and the task run in the test (test_import_worker.py runs one on a real worker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from celery.app.task import Task
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from kombu.exceptions import OperationalError

from annotation import annotation_import, projects, tasks
from annotation.models import Annotation, AnnotationImport
from tests.annotation.factories import make_user
from tests.curation.helpers import valueground_project

pytestmark = pytest.mark.django_db

LS = Path(__file__).resolve().parent.parent / "fixtures" / "labelstudio_valueground.json"
FORM = {"format": "labelstudio", "item_key": "id", "mapping": "quality=q3"}


@pytest.fixture
def project(researcher, tmp_path):
    return valueground_project(researcher, [], tmp_path / "img", n=4, k=3)


@pytest.fixture
def sent(monkeypatch, settings):
    """Every file goes to a worker; the tasks sent, instead of a broker."""
    settings.HV_INLINE_IMPORT_BYTES = 0
    out: list[int] = []
    monkeypatch.setattr(Task, "delay", lambda self, job_id: out.append(job_id))
    return out


def upload(name: str = "ls.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, LS.read_bytes(), content_type="application/json")


def preview_on_the_page(client, project, django_capture_on_commit_callbacks, **form) -> AnnotationImport:
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(reverse("annotation_import_preview", args=[project.id]), {**FORM, **form})
    job = AnnotationImport.objects.filter(project=project, preview=True).latest("id")
    assert resp.status_code == 302 and resp["Location"] == reverse("annotation_import_detail", args=[job.id])
    return job


def run_on_the_worker(job: AnnotationImport) -> AnnotationImport:
    tasks.run_annotation_import(job.id)  # what the worker runs for the task sent
    job.refresh_from_db()
    return job


def test_a_large_preview_is_a_job_whose_page_shows_progress_then_the_preview(
    client, project, researcher, sent, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    job = preview_on_the_page(client, project, django_capture_on_commit_callbacks, file=upload())
    assert sent == [job.id] and job.status == "queued" and job.preview and job.keeps_upload
    page = reverse("annotation_import_detail", args=[job.id])
    waiting = client.get(page, headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 1s"' in waiting and 'data-status="queued"' in waiting

    job = run_on_the_worker(job)
    assert job.status == "done" and job.report["ok"] and job.report["preview"]
    assert job.report["annotations_read"] == 4 and job.report["raters"] == 2
    assert Path(job.data_file).is_file()  # kept for Confirm
    assert not Annotation.objects.filter(item__project=project).exists() and job.written_sha256 is None
    polled = client.get(page, headers={"HX-Request": "true"})
    assert polled.status_code == 204 and polled["HX-Refresh"] == "true"  # the whole page shows the preview
    shown = client.get(page)
    html = shown.content.decode()
    assert shown.status_code == 200 and 'data-testid="annotation-import-preview"' in html
    assert 'data-testid="import-mapping"' in html and "annotations 4" in html
    staged = shown.context["staged"]
    assert staged["token"] == Path(job.data_file).parent.name and staged["mapping"] == "quality=q3"
    assert annotation_import.imports_of(project) == []  # a preview is no import

    # Confirm from the preview job's page: the import, on a worker too
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(reverse("annotation_import_confirm", args=[project.id]), {**FORM, "token": staged["token"]})
    imported = AnnotationImport.objects.get(project=project, preview=False)
    assert resp.status_code == 302 and sent == [job.id, imported.id]
    imported = run_on_the_worker(imported)
    assert imported.status == "done" and imported.report["annotations_created"] == 4
    assert Annotation.objects.filter(source_import=imported).count() == 4
    assert annotation_import.imports_of(project) == [imported]
    assert not Path(job.data_file).exists()  # the import consumed the upload
    gone = client.get(page)  # the preview's page still shows its report, without forms
    assert (
        gone.status_code == 200
        and gone.context["staged"] is None
        and b"is gone" in gone.content
        and b"Import</button>" not in gone.content
    )


def test_the_mapping_edited_on_a_preview_job_s_page_is_previewed_again_as_a_job(
    client, project, researcher, sent, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    first = run_on_the_worker(
        preview_on_the_page(client, project, django_capture_on_commit_callbacks, file=upload(), mapping="")
    )
    assert not first.report["ok"] and any("unknown field 'quality'" in e for e in first.report["errors"])
    token = client.get(reverse("annotation_import_detail", args=[first.id])).context["staged"]["token"]
    again = run_on_the_worker(preview_on_the_page(client, project, django_capture_on_commit_callbacks, token=token))
    assert again.id != first.id and again.report["ok"] and again.data_file == first.data_file


def test_a_preview_job_is_never_an_earlier_import_nor_the_pending_import_of_its_upload(
    client, project, researcher, sent, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    job = preview_on_the_page(client, project, django_capture_on_commit_callbacks, file=upload())
    # Confirm while the preview is still queued: a new import job, not the preview's
    path, name = Path(job.data_file), job.original_name
    imported = annotation_import.start_annotation_import(
        project=project, user=researcher, path=path, original_name=name, data_format="labelstudio",
        item_key="id", mapping={"quality": "q3"}, inline=False,
    )  # fmt: skip
    assert imported.id != job.id and not imported.preview
    run_on_the_worker(job)
    # a done preview of the same file does not make the import "already imported"
    imported = run_on_the_worker(imported)
    assert imported.report["duplicate_of"] is None and imported.report["annotations_created"] == 4


def test_the_api_previews_a_large_file_as_a_job_and_drops_its_upload_after(
    client, project, researcher, sent, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    url = reverse("api-project-annotation-imports", args=[project.id])
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(url, {"file": upload(), "format": "labelstudio", "map": ["quality=q3"], "preview": "true"})
    assert resp.status_code == 202 and resp.json()["preview"] is True
    job = AnnotationImport.objects.get(pk=resp.json()["id"])
    assert sent == [job.id] and not job.keeps_upload
    job = run_on_the_worker(job)
    body = client.get(reverse("api-annotation-import-detail", args=[job.id])).json()
    assert body["status"] == "done" and body["report"]["ok"] and body["report"]["annotations_read"] == 4
    assert not Path(job.data_file).exists() and not Annotation.objects.exists()


def test_a_page_preview_the_broker_refused_fails_and_keeps_its_upload_for_another_try(
    client, project, researcher, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.HV_INLINE_IMPORT_BYTES = 0

    def refused(*args, **kwargs):
        raise OperationalError("Connection refused.")

    monkeypatch.setattr(Task, "delay", refused)
    client.force_login(researcher)
    job = preview_on_the_page(client, project, django_capture_on_commit_callbacks, file=upload())
    job.refresh_from_db()
    assert job.status == "failed" and Path(job.data_file).is_file()  # swept once stale, as any upload
    api = AnnotationImport.objects.create(
        project=project, data_file=job.data_file, data_format="labelstudio", preview=True, keeps_upload=False
    )
    annotation_import.discard_upload(api)  # an API preview's cleanup drops it
    assert not Path(job.data_file).exists()


def test_small_files_keep_the_inline_preview(client, project, researcher, settings):
    settings.HV_INLINE_IMPORT_BYTES = LS.stat().st_size
    client.force_login(researcher)
    resp = client.post(reverse("annotation_import_preview", args=[project.id]), {**FORM, "file": upload()})
    assert resp.status_code == 200 and resp.context["report"].ok and not AnnotationImport.objects.exists()


def test_only_the_project_s_researchers_reach_a_preview_job(
    client, project, researcher, sent, django_capture_on_commit_callbacks
):
    annotator = make_user("ann1")
    projects.add_member(project=project, user=annotator, role="annotator")
    preview = reverse("annotation_import_preview", args=[project.id])
    client.force_login(annotator)
    assert client.post(preview, {**FORM, "file": upload()}).status_code == 403
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.post(preview, {**FORM, "file": upload()}).status_code == 404
    assert not AnnotationImport.objects.exists() and sent == []

    client.force_login(researcher)
    job = run_on_the_worker(preview_on_the_page(client, project, django_capture_on_commit_callbacks, file=upload()))
    page = reverse("annotation_import_detail", args=[job.id])
    api = reverse("api-annotation-import-detail", args=[job.id])
    client.logout()
    assert client.get(page).status_code == 302  # to the login page
    assert client.get(api).status_code in (401, 403)
    client.force_login(annotator)
    assert client.get(page).status_code == 403 and client.get(api).status_code == 404
    client.force_login(make_user("r2", researcher=True))
    assert client.get(page).status_code == 404 and client.get(api).status_code == 404
    client.force_login(researcher)
    assert client.get(page).status_code == 200 and client.get(api).status_code == 200
    # a co-researcher sees the preview, not the uploader's forms (a staged file is its uploader's)
    colleague = make_user("colleague", researcher=True)
    projects.add_member(project=project, user=colleague, role="researcher")
    client.force_login(colleague)
    shown = client.get(page)
    assert shown.status_code == 200 and shown.context["report"].ok and shown.context["staged"] is None
    assert b"Import</button>" not in shown.content
