"""The fast JSONL / CSV writer of the long annotations table is output-preserving: byte for byte
what a plain ``json.dumps`` per row (and ``csv.writer`` per row) of :func:`annotation_rows` gives,
on a small project with awkward text (non-ASCII, quotes, commas, newlines), a model rater with
parameters, missing answers and several batches."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime

import pytest

from annotation.models import Item, Rater
from curation import services
from curation.exports import annotations as annotation_exports
from curation.exports import export_root, run_export_job
from curation.exports.annotations import annotation_schema
from curation.exports.common import Pseudonyms
from curation.exports.provenance import attribute_keys
from curation.models import Export

from .helpers import PASS, REJECT, judge_rates, submit_all, valueground_project

pytestmark = pytest.mark.django_db
SALT = b"fixed salt for the test" * 2
AWKWARD = 'Ünïcödé "quoted", with, commas\nand a newline\r\n\u2014 \U0001f600 \\ back\\slash'


@pytest.fixture
def project(researcher, annotators, tmp_path, monkeypatch):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=4, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    fail = {"q1": 2, "q2": 2, "q3": 2, "q4": 0, "feedback": AWKWARD}
    plan = {items[0].id: PASS, items[1].id: fail, items[2].id: REJECT, items[3].id: {**PASS, "feedback": "ok, fine"}}
    submit_all(project, lambda item, rater: plan[item.id])
    # profile attributes become rater.<key> columns: awkward text, a non-text value, one left blank
    raters = list(Rater.objects.filter(kind="human", assignments__project=project).distinct().order_by("id"))
    raters[0].attributes = {"nationality": AWKWARD, "crowd": True}
    raters[1].attributes = {"nationality": "China", "languages": ["zh", "en"]}
    for r in raters[:2]:
        r.save(update_fields=["attributes"])
    judge = judge_rates(project, lambda item: PASS, name="judge-\u00e9")
    judge.parameters = {"temperature": 0.7, "note": 'caf\u00e9 "x"', "stop": ["\n"]}
    judge.save()
    services.apply_policy(project=project, user=researcher)
    monkeypatch.setattr(annotation_exports, "Pseudonyms", lambda: Pseudonyms(SALT))
    monkeypatch.setattr(annotation_exports, "ANNOTATION_BATCH", 7)  # several batches
    return project


def reference(export, fmt: str) -> bytes:
    """The straightforward writer: one dict per row, json.dumps; or csv.writer per row."""
    out = io.StringIO(newline="")
    names = annotation_schema(attribute_keys(export.project)).names
    w = csv.writer(out, lineterminator="\r\n")  # the platform's CSV rows end in \r\n (issue 23)
    if fmt == "csv":
        w.writerow(names)
    for batch in annotation_exports.annotation_rows(export, Pseudonyms(SALT)):
        for row in batch:
            if fmt == "jsonl":
                out.write(
                    json.dumps(
                        {n: v.isoformat() if isinstance(v, datetime) else v for n, v in zip(names, row, strict=True)},
                        ensure_ascii=False,
                    )
                    + "\n"
                )
            else:
                w.writerow(
                    [
                        ""
                        if v is None
                        else v.isoformat()
                        if isinstance(v, datetime)
                        else json.dumps(v, ensure_ascii=False, sort_keys=True)
                        if isinstance(v, (dict, list))
                        else v
                        for v in row
                    ]
                )
    return out.getvalue().encode("utf-8")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("scope", ["all", "accepted"])
def test_fast_annotation_text_is_byte_identical_to_plain_serialisation(project, researcher, fmt, scope):
    export = run_export_job(
        export=Export.objects.create(
            project=project, created_by=researcher, content="annotations", format=fmt, scope=scope
        )
    )
    assert export.status == "done", export.message
    got = (export_root(export) / f"annotations.{fmt}").read_bytes()
    want = reference(export, fmt)
    assert got == want
    entry = next(f for f in export.files if f["name"] == f"annotations.{fmt}")
    n_lines = len(want.decode().splitlines()) if fmt == "jsonl" else None
    if fmt == "jsonl":
        assert entry["rows"] == n_lines and entry["rows"] > 14
        assert json.dumps(AWKWARD, ensure_ascii=False).encode() in got or scope == "accepted"
        assert b'"judge_parameters": {' in got and b'"temperature": 0.7' in got  # key order: the database's
    else:
        rows = list(csv.reader(io.StringIO(got.decode(), newline="")))
        assert entry["rows"] == len(rows) - 1
        assert any(AWKWARD in r for r in rows) or scope == "accepted"
        assert len({len(r) for r in rows}) == 1
    first = want.decode().splitlines()[0]  # the CSV header, or the first JSONL object
    for column in ("duration_ms", "rater.nationality", "rater.crowd", "rater.languages"):
        assert column in first
