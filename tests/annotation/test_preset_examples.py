"""Each preset's example import files (``/presets/<key>/example.jsonl`` and, with images,
``example.zip``): downloaded as a researcher, they import cleanly through the import page (the
real importer), and every imported item renders in the annotator's view."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation import examples
from annotation.models import ImportJob, Item
from benchmarks.registry import PRESETS

from .factories import make_project, make_user

pytestmark = pytest.mark.django_db

IMAGE_PRESETS = [k for k, p in PRESETS.items() if p.image_fields()]
TEXT_PRESETS = [k for k, p in PRESETS.items() if not p.image_fields()]


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_the_presets_split_into_both_kinds():
    """Both branches below are exercised: presets with images and text-only presets."""
    assert IMAGE_PRESETS and TEXT_PRESETS


@pytest.mark.parametrize("key", list(PRESETS))
def test_example_imports_cleanly_and_every_item_renders_for_an_annotator(key, researcher, annotators):
    c = client_for(researcher)
    jsonl_response = c.get(f"/presets/{key}/example.jsonl")
    assert jsonl_response.status_code == 200
    assert f'filename="{key}.example.jsonl"' in jsonl_response["Content-Disposition"]
    data = jsonl_response.content
    records = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    assert records, "an example holds items"
    upload = {"data": SimpleUploadedFile(f"{key}.example.jsonl", data)}
    if key in IMAGE_PRESETS:
        zip_response = c.get(f"/presets/{key}/example.zip")
        assert zip_response.status_code == 200 and zip_response["Content-Type"] == "application/zip"
        archive = zip_response.content
        with zipfile.ZipFile(io.BytesIO(archive)) as zf:
            names = set(zf.namelist())
            assert zf.read(examples.ZIP_DATA_NAME) == data  # the same records inside the zip
        named = {r[f] for r in records for f in PRESETS[key].image_fields() if r.get(f)}
        assert named and named <= names  # every image the records name is in the zip
        upload["images"] = SimpleUploadedFile(f"{key}.example.zip", archive)
    else:
        assert c.get(f"/presets/{key}/example.zip").status_code == 404

    project = make_project(key, owner=researcher, annotators=annotators, name=f"example {key}")
    r = c.post(f"/projects/{project.id}/import/", upload)
    assert r.status_code == 302, r.content[:300]
    job = ImportJob.objects.get(project=project)
    assert job.status == ImportJob.Status.DONE, job.report
    assert job.report["ok"] and job.report["items_created"] == len(records)
    if key in IMAGE_PRESETS:
        assert job.report["images_stored"] > 0

    for item in Item.objects.filter(project=project).order_by("id"):
        page = c.get(f"/projects/{project.id}/items/{item.id}/preview/")
        assert page.status_code == 200, (key, item.external_id)
        html = page.content.decode()
        assert 'data-testid="preview-note"' in html and 'id="submit-btn"' not in html
        questions = page.context["questions"]
        assert questions and all(f'data-question="{q["id"]}"' in html for q in questions)
        stimulus = page.context["stimulus"]
        assert stimulus, (key, item.external_id)
        for block in stimulus:
            for image in block.get("images", []):
                assert c.get(image["url"]).status_code == 200  # the researcher may see the image


def test_the_new_project_and_project_pages_link_the_examples(researcher):
    c = client_for(researcher)
    new = c.get("/projects/new/").content.decode()
    for key in PRESETS:
        assert f"/presets/{key}/example.jsonl" in new
    for key in IMAGE_PRESETS:
        assert f"/presets/{key}/example.zip" in new
    project = make_project(IMAGE_PRESETS[0], owner=researcher)
    page = c.get(f"/projects/{project.id}/").content.decode()
    assert f"/presets/{IMAGE_PRESETS[0]}/example.zip" in page


def test_examples_are_for_those_who_import(researcher, annotators):
    key = IMAGE_PRESETS[0]
    urls = [f"/presets/{key}/example.jsonl", f"/presets/{key}/example.zip"]
    for url in urls:
        anon = Client().get(url)
        assert anon.status_code == 302 and anon["Location"].startswith("/login/")
        assert client_for(annotators[0]).get(url).status_code == 403
        assert client_for(researcher).get(url).status_code == 200
        assert client_for(make_user(f"root{len(url)}", superuser=True)).get(url).status_code == 200
    assert client_for(researcher).get("/presets/no.such/example.jsonl").status_code == 404


def test_the_same_preset_gives_the_same_bytes():
    key = IMAGE_PRESETS[0]
    examples._build.cache_clear()
    first = (examples.example_jsonl(key), examples.example_zip(key))
    examples._build.cache_clear()
    assert (examples.example_jsonl(key), examples.example_zip(key)) == first
