"""Imports of one annotation file at the same time, against real PostgreSQL (issue 37, H1): each
thread has its own database connection, and every import has checked the file (no import of it
done yet) before any writes, which is what a double click on Confirm or two API posts of a large
file did. Exactly one writes; the others end done as its duplicates, writing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation import annotation_import
from annotation.models import Annotation, AnnotationImport, Assignment, Rater
from tests.concurrency import in_threads, require_postgres, wait_for_each_other_after
from tests.curation.helpers import valueground_project

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

LS = Path(__file__).resolve().parent.parent / "fixtures" / "labelstudio_valueground.json"
IMPORTS = 4


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


@pytest.fixture
def project(researcher, tmp_path):
    return valueground_project(researcher, [], tmp_path / "img", n=4, k=3)


@pytest.fixture
def all_checked_before_any_writes(monkeypatch):
    """Every import waits, once its check found no done import of the file, until all have checked."""
    wait_for_each_other_after(monkeypatch, annotation_import, "check_annotations", IMPORTS)


def assert_written_once(project) -> None:
    annotations = Annotation.objects.filter(item__project=project)
    assert annotations.count() == 4  # the file's 4 ratings, once (16 when every import wrote)
    assert Rater.objects.filter(backend="imported", parameters__project=project.id).count() == 2
    assert Assignment.objects.filter(project=project).count() == 4
    jobs = list(AnnotationImport.objects.filter(project=project).order_by("id"))
    assert len(jobs) == IMPORTS and all(j.status == "done" for j in jobs), [(j.status, j.report) for j in jobs]
    writers = [j for j in jobs if j.written_sha256]
    assert len(writers) == 1, [j.report for j in jobs]
    writer = writers[0]
    assert writer.report["annotations_created"] == 4 and writer.report["duplicate_of"] is None
    for j in jobs:
        if j is not writer:
            assert j.report["duplicate_of"] == writer.id and j.report["annotations_created"] == 0
    assert set(annotations.values_list("source_import", flat=True)) == {writer.id}


def test_imports_of_one_file_started_together_write_it_once(project, tmp_path, all_checked_before_any_writes):
    jobs = []
    for n in range(IMPORTS):
        copy = tmp_path / f"upload{n}.json"
        copy.write_bytes(LS.read_bytes())
        jobs.append(
            AnnotationImport.objects.create(
                project=project, data_file=str(copy), data_format="labelstudio", mapping={"quality": "q3"}
            )
        )
    errors = in_threads(IMPORTS, lambda n: annotation_import.run_annotation_import_job(job=jobs[n]))
    assert not errors, errors
    assert_written_once(project)


def test_api_posts_of_one_file_at_once_write_it_once(project, researcher, all_checked_before_any_writes):
    """The attack as it was made: the same file posted to the import API by concurrent requests."""
    url = reverse("api-project-annotation-imports", args=[project.id])
    statuses: list[int] = []

    def post(n: int) -> None:
        client = Client()
        client.force_login(researcher)
        with LS.open("rb") as fh:
            resp = client.post(url, {"format": "labelstudio", "map": ["quality=q3"], "file": fh})
        statuses.append(resp.status_code)

    errors = in_threads(IMPORTS, post)
    assert not errors, errors
    assert statuses == [201] * IMPORTS
    assert_written_once(project)
