"""Imports of one file of judge outputs at the same time, against real PostgreSQL (issue 32): a
double click on the judges page's Import, or two API posts of the same file. Every import has
checked the file (no import of it done yet, the name free) before any writes, the widest window
a check before the write leaves open. Exactly one writes its model rater; the others end done as
its duplicates, writing nothing (the file's SHA-256 claimed in the writing transaction, a unique
constraint per project, as annotation imports do)."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation, Assignment, Item, Rater
from judges import imported
from judges.models import JudgeOutputImport
from tests.concurrency import in_threads, require_postgres, wait_for_each_other_after
from tests.curation.helpers import PASS, valueground_project

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

IMPORTS = 4


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


@pytest.fixture
def project(researcher, tmp_path):
    return valueground_project(researcher, [], tmp_path / "img", n=3, k=1)


@pytest.fixture
def all_checked_before_any_writes(monkeypatch):
    """Every import waits, once its check found no done import of the file, until all have checked."""
    wait_for_each_other_after(monkeypatch, imported, "check_outputs", IMPORTS)


def outputs(project) -> bytes:
    ids = Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True)
    return "".join(json.dumps({"id": e, **PASS, "clip": 0.5}) + "\n" for e in ids).encode()


def test_api_posts_of_one_file_at_once_write_it_once(project, researcher, all_checked_before_any_writes, tmp_path):
    url = reverse("api_judge_import", args=[project.id])
    path = tmp_path / "verdicts.jsonl"
    path.write_bytes(outputs(project))
    answers: list[tuple[int, dict]] = []

    def post(n: int) -> None:
        client = Client()
        client.force_login(researcher)
        with path.open("rb") as fh:
            resp = client.post(url, {"name": "gpt4o", "metrics": "clip", "file": fh})
        answers.append((resp.status_code, resp.json()))

    errors = in_threads(IMPORTS, post)
    assert not errors, errors
    assert [code for code, _ in answers] == [201] * IMPORTS, answers

    # one model rater with the file's 3 outputs (12 and 4 raters named alike when every import wrote)
    raters = Rater.objects.filter(kind="model", backend="imported")
    assert list(raters.values_list("name", flat=True)) == ["imported: gpt4o"]
    rater = raters.get()
    assert Annotation.objects.filter(rater=rater).count() == 3
    assert Assignment.objects.filter(project=project, rater=rater).count() == 3
    jobs = list(JudgeOutputImport.objects.filter(project=project).order_by("id"))
    assert len(jobs) == IMPORTS and all(j.status == "done" for j in jobs), [(j.status, j.report) for j in jobs]
    writers = [j for j in jobs if j.written_sha256]
    assert len(writers) == 1 and writers[0].rater_id == rater.id, [j.report for j in jobs]
    writer = writers[0]
    assert writer.report["items"] == 3 and writer.report["duplicate_of"] is None
    for j in jobs:
        if j is not writer:
            assert j.report["duplicate_of"] == writer.id and j.report["items"] == 0 and j.rater_id is None
    by_job = {body["job"]: body for _, body in answers}
    assert by_job[writer.id]["items"] == 3
    assert sorted(b["duplicate_of"] for b in by_job.values() if b["job"] != writer.id) == [writer.id] * 3


def test_two_files_under_one_name_at_once_make_one_judge(project, all_checked_before_any_writes, tmp_path):
    """Different files (so no SHA-256 claim stops the second) imported under one judge name at
    the same instant: each checked the name free before any wrote. Exactly one writes its rater;
    the others end refused with the name conflict, writing nothing (the write takes the project's
    row lock before it checks the name again)."""
    ids = list(Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True))
    files = []
    for n in range(IMPORTS):
        files.append(tmp_path / f"verdicts-{n}.jsonl")
        files[n].write_text("".join(json.dumps({"id": e, **PASS, "clip": round(0.1 * (n + 1), 1)}) + "\n" for e in ids))

    def run(n: int) -> None:
        job = imported.start_judge_import(
            project=project,
            user=None,
            path=files[n],
            data_format="jsonl",
            name="gpt4o",
            metrics=["clip"],
            inline=True,
        )
        assert job.pk

    errors = in_threads(IMPORTS, run)
    assert not errors, errors
    raters = Rater.objects.filter(kind="model", backend="imported")
    assert list(raters.values_list("name", flat=True)) == ["imported: gpt4o"]
    assert Annotation.objects.filter(rater=raters.get()).count() == 3
    jobs = list(JudgeOutputImport.objects.filter(project=project).order_by("id"))
    assert sorted(j.status for j in jobs) == ["done"] + ["failed"] * (IMPORTS - 1), [
        (j.status, j.message) for j in jobs
    ]
    for j in jobs:
        if j.status == "failed":
            assert (
                "already has a judge named 'gpt4o'" in j.report["errors"][0]
                and j.rater_id is None
                and not j.written_sha256
            )
