"""The reader registry (``annotation.sources.registry``, issue 32): a format of ratings made
elsewhere is one reader + one registry line. A toy format, declared and registered by this test
alone, is offered by the upload page and the API, previewed, imported as a job and stored as
pseudonymous human raters, with no other change to the platform; once removed it is refused
again, and a stored import of it is checked against the registry, not a table constraint."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Annotation, AnnotationImport, Rater
from annotation.sources import registry
from annotation.sources.common import HUMAN, Reader, SourceRating, text_of
from tests.curation.helpers import valueground_project

pytestmark = pytest.mark.django_db


def read_toy(text, *, item_key, problem, counts, expected):
    """``rater > item : q1=2 q2=1 ...``, one rating a line ("#" starts a comment)."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        counts.records += 1
        head, sep, body = line.partition(":")
        rater, arrow, key = head.partition(">")
        if not sep or not arrow:
            problem(f"line {n}", "a toy line is 'rater > item : field=value ...'")
            continue
        rating = SourceRating(where=f"line {n}", key=text_of(key), rater=text_of(rater))
        for pair in body.split():
            name, _eq, value = pair.partition("=")
            rating.answers[name] = value
            counts.saw(name)
        out.append(rating)
    return out


TOY = Reader("toy", "Toy ratings", HUMAN, ".toy", read_toy)
TOY_FILE = (
    "# a study run in a toy tool\n"
    "p1 > vg0 : q1=2 q2=1 q3=2 q4=1\n"
    "p2 > vg0 : q1=1 q2=1 q3=0 q4=0\n"
    "p1 > vg1 : q1=0 q2=2 q3=1 q4=1\n"
)


@pytest.fixture
def toy():
    registry.register(TOY)
    yield TOY
    registry.unregister(TOY.key)


@pytest.fixture
def project(researcher, tmp_path):
    return valueground_project(researcher, [], tmp_path / "img", n=2, k=1)


def upload(text=TOY_FILE):
    return SimpleUploadedFile("study.toy", text.encode(), content_type="text/plain")


def test_a_toy_reader_goes_from_upload_through_preview_to_stored_human_ratings(client, project, researcher, toy):
    client.force_login(researcher)
    page = client.get(reverse("annotation_imports", args=[project.id]))
    assert b'value="toy"' in page.content and b"Toy ratings" in page.content  # the form reads the registry
    preview = reverse("annotation_import_preview", args=[project.id])
    form = {"format": "toy", "item_key": "id", "mapping": ""}
    resp = client.post(preview, {**form, "file": upload()})
    assert resp.status_code == 200, resp.content
    report = resp.context["report"]
    assert report.ok and report.preview and report.annotations_read == 3 and report.raters_new == 2
    assert not Annotation.objects.filter(item__project=project).exists()  # a preview writes nothing
    token = resp.context["staged"]["token"]
    assert resp.context["staged"]["format"] == "toy"

    resp = client.post(reverse("annotation_import_confirm", args=[project.id]), {**form, "token": token})
    job = AnnotationImport.objects.get(project=project)
    assert resp.status_code == 302 and job.status == "done", job.report
    assert job.data_format == "toy" and job.data_file.endswith(".toy")
    job.full_clean()  # the stored format passes the model's check against the registry
    raters = Rater.objects.filter(annotations__source_import=job).distinct()
    assert {(r.kind, r.backend, r.user_id) for r in raters} == {("human", "imported", None)}
    assert {r.parameters["source_id"] for r in raters} == {"p1", "p2"}
    got = {
        (a.rater.parameters["source_id"], a.item.external_id): a.answers
        for a in Annotation.objects.filter(source_import=job).select_related("rater", "item")
    }
    assert got[("p1", "vg0")] == {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": None}  # "2" -> 2, as any reader
    assert len(got) == 3

    # the same pipeline checks a toy file all or nothing, with its reader's line numbers
    bad = client.post(preview, {**form, "file": upload("p1 > vg0 : q1=7 q2=1 q3=2 q4=1\nnot a toy line\n")})
    errors = bad.context["report"].errors
    assert "line 2: a toy line is 'rater > item : field=value ...'" in errors
    assert any(e.startswith("line 1: question 'q1' (item 'vg0'): '7' is not one of") for e in errors), errors


def test_the_api_and_the_command_take_a_registered_reader_and_refuse_it_once_removed(client, project, researcher):
    url = reverse("api-project-annotation-imports", args=[project.id])
    client.force_login(researcher)
    with registry.registered(TOY):
        resp = client.post(url, {"format": "toy", "preview": "true", "file": upload()})
        assert resp.status_code == 200 and resp.json()["annotations_read"] == 3, resp.content
        resp = client.post(url, {"format": "toy", "file": upload()})
        assert resp.status_code == 201 and resp.json()["report"]["annotations_created"] == 3, resp.content
    job = AnnotationImport.objects.get(project=project)
    resp = client.post(url, {"format": "toy", "file": upload()})
    assert resp.status_code == 400 and "format" in resp.json()
    with pytest.raises(ValidationError):
        job.full_clean()  # a format no reader reads any more
    assert Annotation.objects.filter(source_import=job).count() == 3  # what was imported stays


def test_a_format_means_one_thing():
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Reader("csv", "Another CSV", HUMAN, ".csv", read_toy))
    with pytest.raises(ValueError, match="human or model"):
        registry.register(Reader("odd", "Odd", "robot", ".odd", read_toy))
    assert "odd" not in registry.READERS and registry.READERS["csv"].label != "Another CSV"


def test_every_reader_is_offered_where_its_ratings_are_imported():
    human = registry.keys(registry.HUMAN)
    assert human == [
        "labelstudio",
        "csv",
        "jsonl",
        "wide",
        "labelstudio-min",
        "labelstudio-csv",
        "comparisons-csv",
        "comparisons-jsonl",
    ]
    assert [k for k, _label in registry.human_choices()] == human
    assert set(registry.by_suffix(registry.MODEL)) == {"jsonl", "csv"}  # the judges page's file types
    assert registry.keys(registry.MODEL) == ["outputs-jsonl", "outputs-csv", "judge-pairs-csv", "judge-pairs-jsonl"]
    assert {k for k, _label in registry.choices()} == set(registry.READERS)
