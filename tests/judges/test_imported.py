"""External judges and metrics as raters (issue 10, point 5): outputs made elsewhere are imported
as a model rater (all or nothing, problems by line) and then appear in the ratings frame, the
acceptance policy's judge screening and the annotations export like a run judge."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from agreement.selectors import ratings_frame
from annotation.models import Annotation, Assignment, Item, Rater
from core.errors import DomainError
from curation import services as curation
from curation.exports import export_root, run_export_job
from curation.models import Export
from judges import configuration, imported
from tests.annotation.factories import make_user
from tests.curation.helpers import PASS, REJECT, submit_all, valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(researcher, annotator, tmp_path):
    project = valueground_project(researcher, [annotator], tmp_path / "img", n=4, k=1)
    submit_all(project, lambda item, rater: PASS)
    return project


def ext_ids(project):
    return list(Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True))


def outputs(project, *, reject_first=True):
    lines = []
    for i, ext in enumerate(ext_ids(project)):
        answers = REJECT if (i == 0 and reject_first) else PASS
        lines.append(json.dumps({"id": ext, **answers, "clip": 0.2 + i / 10}))
    return "\n".join(lines) + "\n"


def model_count():
    return Rater.objects.filter(kind="model").count(), Annotation.objects.filter(rater__kind="model").count()


def test_imported_outputs_are_a_rater_everywhere(project, researcher):
    report = imported.import_judge_outputs(
        project=project,
        data=outputs(project),
        data_format="jsonl",
        name="gpt4o",
        model_id="gpt-4o-2024-08-06",
        method="the pipeline's verdict prompt",
        metrics=["clip"],
        source_file="verdicts.jsonl",
        user=researcher,
    )
    assert report.ok, report.errors
    assert report.items == 4 and report.questions == ["q1", "q2", "q3", "q4"] and report.metrics == ["clip"]
    rater = Rater.objects.get(pk=report.rater)
    assert rater.kind == "model" and rater.backend == "imported" and rater.model_id == "gpt-4o-2024-08-06"
    assert len(rater.prompt_hash) == 64 and rater.parameters["source_file"] == "verdicts.jsonl"
    ann = Annotation.objects.filter(rater=rater).order_by("item_id").first()
    assert ann.assignment.status == Assignment.Status.SUBMITTED
    assert "total" in ann.derived and ann.derived["accepted"] is False  # derived with the rubric
    assert ann.derived["judge_metrics"] == {"clip": 0.2}

    # the ratings frame: the rubric fields and the metric, with the model rater
    frame = ratings_frame(project)
    mine = frame[frame["rater"] == "imported: gpt4o"]
    assert set(mine["rater_kind"]) == {"model"}
    assert {"q1", "q4", "total", "clip"} <= set(mine["field"])
    clip = mine[mine["field"] == "clip"].sort_values("item_pk")["value"].tolist()
    assert clip == pytest.approx([0.2, 0.3, 0.4, 0.5])

    # the policy's judge screening reads it like a run judge
    curation.set_policy(project=project, raw={"judge_screening": True}, user=researcher)
    curation.apply_policy(project=project, user=researcher)
    first = Item.objects.filter(project=project).order_by("id").first()
    assert first.decision.status == "rejected" and "judge screening" in first.decision.reason
    assert Item.objects.filter(project=project, decision__status="accepted").count() == 3

    # the annotations export: its rows, the metric as a field, the judge named
    export = run_export_job(
        export=Export.objects.create(
            project=project, created_by=researcher, content="annotations", format="jsonl", scope="all"
        )
    )
    assert export.status == "done", export.message
    df = pd.read_json(export_root(export) / "annotations.jsonl", lines=True, dtype=False)
    judge = df[df["rater_kind"] == "model"]
    assert set(judge["judge_name"]) == {"imported: gpt4o"} and set(judge["judge_backend"]) == {"imported"}
    assert sorted(judge[judge["field"] == "clip"]["value_num"]) == pytest.approx([0.2, 0.3, 0.4, 0.5])


def test_a_bad_file_changes_nothing_and_says_which_lines(project):
    ids = ext_ids(project)
    lines = [
        json.dumps({"id": ids[0], **PASS}),
        json.dumps({"id": "nope", **PASS}),  # 2: unknown external id
        json.dumps({"id": ids[1], **PASS, "q9": 1}),  # 3: unknown question
        json.dumps({"id": ids[2], **PASS, "q1": 7}),  # 4: invalid answer
        json.dumps({"id": ids[0], **PASS}),  # 5: duplicate item
        "{not json",  # 6
        json.dumps({"id": ids[3], **PASS, "clip": "high"}),  # 7: a score that is not a number
    ]
    before = model_count()
    report = imported.import_judge_outputs(
        project=project, data="\n".join(lines), data_format="jsonl", name="bad", metrics=["clip"]
    )
    assert not report.ok and model_count() == before
    text = "\n".join(report.errors)
    for expected in (
        "line 2: unknown external id 'nope'",
        "line 3: unknown question 'q9'",
        "line 4: invalid answer: q1:",
        "line 5: item",
        "first on line 1",
        "line 6: invalid JSON",
        "line 7: score 'clip' must be a finite number",
    ):
        assert expected in text, text


def test_csv_import_and_its_header(project):
    ids = ext_ids(project)
    rows = ["id,q1,q2,q3,q4,clip"] + [f"{e},2,1,2,1,0.{i}" for i, e in enumerate(ids)]
    report = imported.import_judge_outputs(
        project=project, data="\n".join(rows) + "\n", data_format="csv", name="csv judge", metrics=["clip"]
    )
    assert report.ok, report.errors
    assert Annotation.objects.filter(rater_id=report.rater, answers__q1=2).count() == 4
    before = model_count()
    bad = imported.import_judge_outputs(project=project, data="item,q1\nx,2\n", data_format="csv", name="wrong header")
    assert not bad.ok and model_count() == before
    assert bad.errors[0].startswith("line 1: wrong CSV header: no 'id' column; unknown column(s) item")


def test_a_taken_name_is_refused(project):
    configuration.create_judge_config(project=project, name="taken", backend="image_similarity")
    with pytest.raises(DomainError, match="already has a judge named 'taken'"):
        imported.import_judge_outputs(project=project, data=outputs(project), data_format="jsonl", name="taken")
    assert imported.import_judge_outputs(
        project=project, data=outputs(project), data_format="jsonl", name="x", metrics=["clip"]
    ).ok
    with pytest.raises(DomainError, match="already has a judge named 'x'"):
        imported.import_judge_outputs(project=project, data=outputs(project), data_format="jsonl", name="x")


def test_the_command(project, tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(outputs(project))
    call_command("import_judge_outputs", str(project.id), str(path), "--name", "cli", "--metric", "clip")
    assert Rater.objects.filter(name="imported: cli", backend="imported").exists()
    path.write_text('{"id": "nope", "q1": 2}\n')
    with pytest.raises(CommandError, match="line 1: unknown external id"):
        call_command("import_judge_outputs", str(project.id), str(path), "--name", "cli2")


def upload(project):
    return SimpleUploadedFile("out.jsonl", outputs(project).encode(), content_type="application/x-ndjson")


def test_the_api_imports_for_the_projects_researchers_only(client, project, researcher, annotator):
    url = reverse("api_judge_import", args=[project.id])
    data = {"name": "api", "metrics": "clip", "model_id": "m"}
    assert client.post(url, {**data, "file": upload(project)}).status_code in (401, 403)
    client.force_login(annotator)
    assert client.post(url, {**data, "file": upload(project)}).status_code == 404
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.post(url, {**data, "file": upload(project)}).status_code == 404
    assert not Rater.objects.filter(backend="imported").exists()
    client.force_login(researcher)
    resp = client.post(url, {**data, "file": upload(project)})
    assert resp.status_code == 201, resp.content
    assert resp.json()["items"] == 4 and resp.json()["metrics"] == ["clip"]
    bad = SimpleUploadedFile("bad.jsonl", b'{"id": "nope", "q1": 2}\n')
    resp = client.post(url, {"name": "api2", "file": bad})
    assert resp.status_code == 400 and resp.json()["errors"] == ["line 1: unknown external id 'nope'"]


def test_the_judges_page_form(client, project, researcher, annotator):
    url = reverse("judge_import", args=[project.id])
    data = {"name": "page", "metrics": "clip"}
    assert client.post(url, {**data, "file": upload(project)}).status_code == 302  # to the login page
    client.force_login(annotator)
    assert client.post(url, {**data, "file": upload(project)}).status_code == 403
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.post(url, {**data, "file": upload(project)}).status_code == 404  # an outsider learns nothing
    assert not Rater.objects.filter(backend="imported").exists()
    client.force_login(researcher)
    page = client.get(reverse("judges", args=[project.id]))
    assert b"Import judge outputs" in page.content
    resp = client.post(url, {**data, "file": upload(project)})
    assert resp.status_code == 302
    page = client.get(reverse("judges", args=[project.id]))
    assert b'data-testid="imported-page"' in page.content
    bad = SimpleUploadedFile("bad.jsonl", b'{"id": "nope", "q1": 2}\n')
    resp = client.post(url, {"name": "page2", "file": bad})
    assert resp.status_code == 400 and b"line 1: unknown external id" in resp.content


def test_a_toy_reader_of_judge_outputs_is_imported_as_a_model_rater(client, project, researcher):
    """A format of a judge's outputs is one reader in the registry (``annotation.sources``): the
    judges' API offers it by its file type and imports it as a model rater, through the same
    reading stage, with nothing in judges naming it."""
    from annotation.sources import registry
    from annotation.sources.common import MODEL, Reader, SourceRating

    def read_toy(text, *, item_key, problem, counts, expected):  # "item: q1=2 q2=1 ...", a line per item
        out = []
        for n, line in enumerate(text.splitlines(), start=1):
            counts.records += 1
            key, sep, body = line.partition(":")
            if not sep:
                problem(f"line {n}", "a toy line is 'item: field=value ...'")
                continue
            answers = {k: int(v) for k, _eq, v in (p.partition("=") for p in body.split())}
            out.append(SourceRating(where=f"line {n}", key=key.strip(), rater="", answers=answers))
        return out

    lines = [f"{ext}: " + " ".join(f"{q}={v}" for q, v in PASS.items()) for ext in ext_ids(project)]
    url = reverse("api_judge_import", args=[project.id])
    client.force_login(researcher)
    with registry.registered(Reader("toy-outputs", "Toy outputs", MODEL, ".toy", read_toy)):
        toy = SimpleUploadedFile("out.toy", ("\n".join(lines) + "\n").encode())
        resp = client.post(url, {"name": "toy judge", "format": "toy", "file": toy})
        assert resp.status_code == 201, resp.content
        bad = SimpleUploadedFile("bad.toy", b"no colon here\n")
        resp = client.post(url, {"name": "toy judge 2", "format": "toy", "file": bad})
        assert resp.status_code == 400 and resp.json()["errors"] == ["line 1: a toy line is 'item: field=value ...'"]
    rater = Rater.objects.get(name="imported: toy judge")
    assert rater.kind == "model" and rater.backend == "imported"
    assert Annotation.objects.filter(rater=rater, answers__q1=2).count() == len(lines)
    toy = SimpleUploadedFile("out.toy", ("\n".join(lines) + "\n").encode())
    resp = client.post(url, {"name": "toy judge 3", "format": "toy", "file": toy})
    assert resp.status_code == 400 and "format" in resp.json()["errors"][0]  # removed with its reader
