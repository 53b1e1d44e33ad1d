"""Staged uploads nobody imported are swept (a page preview left open, a process killed between
upload and job); what an unfinished job still reads, and anything recent, stays."""

from __future__ import annotations

import io
import os
import time

import pytest

from annotation import annotation_import, staging
from annotation.models import AnnotationImport
from annotation.tasks import sweep_staged_uploads
from tests.annotation.test_import_annotations import LS

pytestmark = pytest.mark.django_db

DAY = 24 * 3600


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def stage(project, researcher):
    return annotation_import.stage_annotations(
        project=project, user=researcher, name="export.json", chunks=[LS.read_bytes()], data_format="labelstudio"
    )


def age(folder, seconds):
    then = time.time() - seconds
    os.utime(folder, (then, then))


@pytest.fixture
def project(researcher, tmp_path):
    from tests.curation.helpers import valueground_project

    return valueground_project(researcher, [], tmp_path / "img", n=2, k=1)


def test_an_old_preview_is_swept_and_a_recent_one_kept(project, researcher, settings):
    settings.HV_STAGED_UPLOAD_TTL_SECONDS = DAY
    old, recent = stage(project, researcher), stage(project, researcher)
    age(old.path.parent, DAY + 60)
    age(recent.path.parent, DAY - 60)
    assert sweep_staged_uploads() == 1  # the beat task
    assert not old.path.parent.exists() and recent.path.exists()
    with pytest.raises(Exception, match="this upload is gone"):
        annotation_import.staged_annotations(project=project, user=researcher, token=old.token)


def test_a_file_an_unfinished_job_reads_is_kept_however_old(project, researcher):
    staged = stage(project, researcher)
    job = AnnotationImport.objects.create(
        project=project, created_by=researcher, data_file=str(staged.path), data_format="labelstudio", item_key="id"
    )
    assert job.status == "queued"
    age(staged.path.parent, 10 * DAY)
    assert staging.sweep_staged_uploads(max_age_s=DAY) == 0 and staged.path.exists()
    AnnotationImport.objects.filter(pk=job.pk).update(status="failed")
    assert staging.sweep_staged_uploads(max_age_s=DAY) == 1 and not staged.path.exists()


def test_an_item_import_staging_folder_is_swept_too(settings):
    staged = staging.stage_upload(data_name="items.jsonl", data_stream=[io.BytesIO(b'{"id": "a"}\n').read()])
    age(staged.folder, 2 * DAY)
    assert staging.sweep_staged_uploads(max_age_s=DAY) == 1 and not staged.folder.exists()


def test_nothing_staged_yet_sweeps_nothing():
    assert staging.sweep_staged_uploads(max_age_s=0) == 0
