"""The import of a judge's outputs is a staged-upload job like every import of a file (issue 32):
it says how far it is (checking, then writing), runs at once below ``HV_INLINE_IMPORT_BYTES`` and
on a worker above it (202 from the API, a queued row with its bar on the judges page), is read
back through a permission-checked endpoint, and a file already written into the project is
imported once (a duplicate adds nothing, whatever name it is given)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation import staging
from annotation.models import Annotation, Item, Rater
from core.errors import DomainError
from judges import imported
from judges.models import JudgeOutputImport
from tests.annotation.factories import make_project, make_user
from tests.curation.helpers import PASS, REJECT, valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def project(researcher, annotator, tmp_path):
    return valueground_project(researcher, [annotator], tmp_path / "img", n=3, k=1)


def outputs(project, *, clip: float = 0.5) -> bytes:
    ids = Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True)
    lines = [json.dumps({"id": e, **(REJECT if i == 0 else PASS), "clip": clip + i / 10}) for i, e in enumerate(ids)]
    return ("\n".join(lines) + "\n").encode()


def staged(media_root) -> list[Path]:
    root = Path(media_root) / "imports"
    return sorted(root.iterdir()) if root.is_dir() else []


def model_rows() -> tuple[int, int]:
    return Rater.objects.filter(kind="model").count(), Annotation.objects.filter(rater__kind="model").count()


def test_an_import_reports_checking_then_writing(project, tmp_path, monkeypatch):
    monkeypatch.setattr(staging, "PROGRESS_TICK", 0.0)  # every line reports
    path = tmp_path / "out.jsonl"
    path.write_bytes(outputs(project))
    job = JudgeOutputImport.objects.create(
        project=project, data_file=str(path), data_format="outputs-jsonl", name="p", metrics=["clip"]
    )
    JudgeOutputImport.objects.filter(pk=job.pk).update(status="running", attempts=1)  # as jobs.start leaves it
    job.refresh_from_db()
    seen: list[tuple[float, str]] = []
    plan = imported.check_outputs(
        project=project,
        data=path,
        data_format=job.data_format,
        name=job.name,
        metrics=job.metrics,
        progress=lambda f, phase: seen.append((f, phase)),
    )
    assert plan.report.ok and len(plan.rows) == 3, plan.report.errors
    imported.write_outputs(plan, job=job, progress=lambda f, phase: seen.append((f, phase)))
    job.refresh_from_db()
    assert job.status == "done" and job.report["items"] == 3 and job.percent == 100
    phases = [phase for _f, phase in seen]
    assert phases[0] == "checking" and phases[-1] == "writing"
    assert phases == sorted(phases, key=["checking", "writing"].index)
    fractions = [f for f, _phase in seen]
    assert fractions == sorted(fractions) and fractions[0] >= 0 and fractions[-1] < 1
    assert (
        max(f for f, p in seen if p == "checking") <= imported.CHECK_SHARE <= min(f for f, p in seen if p == "writing")
    )
    assert len({f for f, p in seen if p == "writing"}) == 3  # one report per output written


def test_a_large_file_is_queued_and_read_back_by_the_projects_managers_only(
    client, project, researcher, annotator, media_root, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    settings.HV_INLINE_IMPORT_BYTES = 0  # every import goes to a worker
    sent = []
    monkeypatch.setattr(Task, "delay", lambda self, *a, **k: sent.append((self.name, a)))
    client.force_login(researcher)
    upload = SimpleUploadedFile("verdicts.jsonl", outputs(project))
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(
            reverse("api_judge_import", args=[project.id]), {"name": "big", "file": upload, "metrics": "clip"}
        )
    assert resp.status_code == 202, resp.content
    body = resp.json()
    assert body["status"] == "queued" and body["percent"] == 0 and body["ok"] is False and body["errors"] == []
    assert sent == [("judges.run_output_import", (body["job"],))]
    assert model_rows() == (0, 0) and len(staged(media_root)) == 1  # kept for its worker

    url = reverse("api_judge_import_detail", args=[project.id, body["job"]])
    client.logout()
    assert client.get(url).status_code in (401, 403)
    client.force_login(annotator)
    assert client.get(url).status_code == 404
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.get(url).status_code == 404  # an outsider learns nothing
    other = make_project("cqbench.turing", owner=make_user("other-owner", researcher=True))
    client.force_login(researcher)
    assert client.get(reverse("api_judge_import_detail", args=[other.id, body["job"]])).status_code == 404
    assert client.get(url).json()["status"] == "queued"

    job = imported.run_judge_import_job(job=JudgeOutputImport.objects.get(pk=body["job"]))  # the worker
    assert job.status == "done"
    done = client.get(url).json()
    assert done["ok"] and done["status"] == "done" and done["percent"] == 100 and done["items"] == 3
    assert done["rater"] == job.rater_id and done["metrics"] == ["clip"] and done["name"] == "big"
    assert model_rows() == (1, 3) and staged(media_root) == []


def test_the_judges_page_shows_a_queued_import_and_its_outcome(
    client, project, researcher, media_root, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from celery.app.task import Task

    settings.HV_INLINE_IMPORT_BYTES = 0
    monkeypatch.setattr(Task, "delay", lambda self, *a, **k: None)
    client.force_login(researcher)
    upload = SimpleUploadedFile("verdicts.jsonl", outputs(project))
    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post(
            reverse("judge_import", args=[project.id]), {"name": "big", "metrics": "clip", "file": upload}, follow=True
        )
    job = JudgeOutputImport.objects.get()
    page = resp.content.decode()
    assert f"Import {job.id} of judge &#x27;big&#x27; is queued" in page
    assert f'data-testid="judge-import-{job.id}"' in page and 'role="progressbar"' in page
    part_url = reverse("judge_imports", args=[project.id])
    assert f'hx-get="{part_url}"' in page  # the table polls itself while an import runs
    part = client.get(part_url, HTTP_HX_REQUEST="true")
    assert part.status_code == 200 and 'role="progressbar"' in part.content.decode() and "HX-Refresh" not in part
    imported.run_judge_import_job(job=job)
    part = client.get(part_url, HTTP_HX_REQUEST="true")
    assert part["HX-Refresh"] == "true" and "hx-get" not in part.content.decode()  # ended: the page reloads whole
    page = client.get(reverse("judges", args=[project.id])).content.decode()
    row = page[page.index(f'data-testid="judge-import-{job.id}"') :]
    assert "3 outputs" in row[: row.index("</tr>")], row[:2000] and 'role="progressbar"' not in page


def test_a_file_written_already_is_a_duplicate_whatever_its_name(client, project, researcher, media_root, tmp_path):
    first = imported.import_judge_outputs(
        project=project, data=outputs(project), data_format="jsonl", name="a", metrics=["clip"]
    )
    assert first.ok and first.items == 3 and first.duplicate_of is None
    before = model_rows()
    again = imported.import_judge_outputs(
        project=project, data=outputs(project), data_format="jsonl", name="b", metrics=["clip"]
    )
    writer = JudgeOutputImport.objects.get(written_sha256__isnull=False)
    assert again.ok and again.duplicate_of == writer.id and again.items == 0
    assert again.rater == first.rater and again.name == "a"  # the judge that holds these outputs
    client.force_login(researcher)
    resp = client.post(
        reverse("api_judge_import", args=[project.id]),
        {"name": "c", "metrics": "clip", "file": SimpleUploadedFile("same.jsonl", outputs(project))},
    )
    assert resp.status_code == 201 and resp.json()["duplicate_of"] == writer.id and resp.json()["items"] == 0
    path = tmp_path / "same.jsonl"
    path.write_bytes(outputs(project))
    call_command("import_judge_outputs", str(project.id), str(path), "--name", "d", "--metric", "clip")
    assert path.is_file()  # a file given on the command line is read where it is, never deleted
    assert model_rows() == before
    other_file = imported.import_judge_outputs(
        project=project, data=outputs(project, clip=0.1), data_format="jsonl", name="e", metrics=["clip"]
    )
    assert other_file.ok and other_file.items == 3 and other_file.duplicate_of is None  # another file is imported
    assert staged(media_root) == []


def test_a_refused_file_fails_its_job_with_the_lines_and_leaves_nothing(client, project, researcher, media_root):
    client.force_login(researcher)
    bad = SimpleUploadedFile("bad.jsonl", b'{"id": "nope", "q1": 2}\n{"id": ')
    resp = client.post(reverse("api_judge_import", args=[project.id]), {"name": "bad", "file": bad})
    assert resp.status_code == 400
    body = resp.json()
    assert body["status"] == "failed" and body["job"] is not None
    assert "line 1: unknown external id 'nope'" in body["errors"]
    assert any(e.startswith("line 2: invalid JSON") for e in body["errors"]), body["errors"]
    job = JudgeOutputImport.objects.get(pk=body["job"])
    assert job.written_sha256 is None and job.rater is None and len(job.sha256) == 64
    assert model_rows() == (0, 0) and staged(media_root) == []
    # refused before a job is made: a bad metric name, no job and no staged file
    resp = client.post(
        reverse("api_judge_import", args=[project.id]),
        {"name": "m", "metrics": "q1", "file": SimpleUploadedFile("o.jsonl", outputs(project))},
    )
    assert resp.status_code == 400 and resp.json()["job"] is None and "metric name 'q1'" in resp.json()["errors"][0]
    assert JudgeOutputImport.objects.count() == 1 and staged(media_root) == []
    with pytest.raises(DomainError, match="at most 150 characters"):  # the command takes any length
        imported.import_judge_outputs(project=project, data=outputs(project), data_format="jsonl", name="n" * 151)
    assert JudgeOutputImport.objects.count() == 1 and staged(media_root) == [] and model_rows() == (0, 0)


def test_the_imports_table_is_for_the_projects_managers_only(client, project, researcher, annotator):
    url = reverse("judge_imports", args=[project.id])
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.get(url).status_code == 404  # an outsider learns nothing
    client.force_login(researcher)
    assert client.get(url).status_code == 200
