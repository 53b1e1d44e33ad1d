"""Issue 12: values no stored row may hold are refused with a clear message, never a server error
(NUL characters, which PostgreSQL refuses; JSON nested so deep that parsing it recursed out of
the stack), and acceptance / derived expressions cannot build huge texts or lists."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from annotation import importing
from annotation.expressions import MAX_SEQUENCE, Expression, ExpressionError
from annotation.models import Assignment, Item
from core.values import MAX_DEPTH, value_problem

from .factories import jsonl, make_project, turing_records, valueground_records

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(researcher, annotators, tmp_path):
    return make_project("valueground.pair_quality", owner=researcher, annotators=annotators, k=2)


def deep(n: int) -> str:
    return "[" * n + "]" * n


def test_nul_characters_in_item_text_are_refused_with_the_line(project, tmp_path):
    records = valueground_records(tmp_path, n=2)
    records[1]["question"] = "family\u0000values"
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert not report.ok and any(e.startswith("line 2:") and "NUL" in e for e in report.errors), report.errors
    records[1]["question"] = "ok"
    records[1]["meta"] = {"k\u0000": "v"}
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert not report.ok and any(e.startswith("line 2:") and "NUL" in e for e in report.errors), report.errors
    assert not Item.objects.filter(project=project).exists()


def test_nul_characters_in_a_csv_cell_are_refused_with_the_line(researcher):
    project = make_project("cqbench.turing", owner=researcher)
    rows = turing_records(2)
    text = next(k for k, v in rows[1].items() if k != "id" and isinstance(v, str))
    rows[1][text] = "a\x00b"
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    report = importing.import_items(project=project, data=buf.getvalue(), data_format="csv")
    assert not report.ok and any(e.startswith("line 3:") and "NUL" in e for e in report.errors), report.errors


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 100_000])
def test_deeply_nested_json_is_refused_with_the_line_not_an_internal_error(project, tmp_path, depth):
    records = valueground_records(tmp_path, n=1)
    line = json.dumps({**records[0], "meta": {"x": "__DEEP__"}}).replace('"__DEEP__"', deep(depth))
    report = importing.import_items(
        project=project, data=jsonl(records) + line + "\n", data_format="jsonl", images=tmp_path
    )
    assert not report.ok
    assert any(e.startswith("line 2:") and "nested too deeply" in e for e in report.errors), report.errors
    assert not any("RecursionError" in e or "internal error" in e for e in report.errors)


def test_the_api_refuses_nul_and_deep_json_in_answers_with_400(project, annotators, tmp_path):
    report = importing.import_items(
        project=project, data=jsonl(valueground_records(tmp_path, n=1)), data_format="jsonl", images=tmp_path
    )
    assert report.ok
    a = Assignment.objects.filter(rater__user=annotators[0], project=project).first()
    c = Client(raise_request_exception=False)
    c.force_login(annotators[0])
    url = f"/api/assignments/{a.id}/submit/"
    answers = {"q1": 2, "q2": 2, "q3": 2, "q4": 1, "feedback": "bad\u0000text"}
    resp = c.post(url, {"answers": answers}, content_type="application/json")
    assert resp.status_code == 400 and "NUL" in resp.json()["detail"]
    resp = c.post(
        url, {"answers": {**answers, "feedback": json.loads(deep(MAX_DEPTH + 2))}}, content_type="application/json"
    )
    assert resp.status_code == 400 and "nested too deeply" in resp.content.decode()
    body = '{"answers": {"feedback": ' + deep(200_000) + "}}"
    resp = c.post(url, body, content_type="application/json")
    assert resp.status_code == 400 and "nested too deeply" in resp.content.decode()
    assert not a.__class__.objects.filter(pk=a.pk, status="submitted").exists()


def test_value_problem():
    assert value_problem({"a": [1, {"b": "ok"}]}) is None
    assert "NUL" in value_problem(["x\x00"])
    assert "nested too deeply" in value_problem(json.loads(deep(MAX_DEPTH + 1)))
    assert value_problem(json.loads(deep(MAX_DEPTH))) is None


@pytest.mark.parametrize(
    "source, message",
    [
        ('"x" * 1000000000', "repeating a text or a list"),
        ("[0] * 1000000000", "repeating a text or a list"),
        ('1000000000 * ("x", 1)', "repeating a text or a list"),
        ('"%999999999d" % 1', "formatting text"),
        ("q1 + 99999999999999999999", "number constant"),
        ('"' + "x" * 5000 + '"', "text constant"),
    ],
)
def test_expressions_cannot_build_huge_values(source, message):
    with pytest.raises(ExpressionError, match=message):
        Expression(source)


def test_expressions_on_answers_stay_small():
    assert Expression("feedback * 1000000000").evaluate({"feedback": "ab"}) is None
    assert Expression("feedback * 2").evaluate({"feedback": "ab"}) == "abab"
    assert Expression("(feedback + feedback) * n").evaluate({"feedback": "a", "n": MAX_SEQUENCE}) is None
    assert Expression("q1 + q2 >= 3 and q4 == 1").evaluate({"q1": 2, "q2": 1, "q4": 1}) is True


def test_a_policy_with_a_huge_repetition_is_refused_by_the_api(project, researcher):
    c = Client(raise_request_exception=False)
    c.force_login(researcher)
    resp = c.put(
        f"/api/projects/{project.id}/acceptance-policy/",
        {"rule": 'len("x" * 1000000000) > 0'},
        content_type="application/json",
    )
    assert resp.status_code == 400 and "repeating a text or a list" in resp.content.decode()
