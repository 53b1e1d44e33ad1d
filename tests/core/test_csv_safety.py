"""Issue 12, finding 7 (unified): one rule for spreadsheet formula injection, ``core.csvsafe``,
used by every CSV the platform writes: curation exports (``curation.exports.common.csv_cell``,
tested end to end in ``tests/curation/test_export_formulas.py``), the agreement report
(``agreement.services.report_csv``) and the study dashboard (``studies.exports.dashboard_table``).
Formula-like text gets a leading ``'``; numbers, and numbers written as text, stay as they are."""

from __future__ import annotations

import csv
import io

import pytest

from core import csvsafe

HOSTILE = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1", '=HYPERLINK("x")']
PLAIN = ["plain text", "-1", "+2.5", "1e-3", "-.5", "", "a=b", "x-1"]


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_like_text_is_quoted(text):
    expected = "'" + text if "\r" not in text else "'\r'=1+1"  # the line after a CR too (issue 23)
    assert csvsafe.defuse(text) == expected
    assert csvsafe.csv_cell(text) == expected


@pytest.mark.parametrize("value", [*PLAIN, 0, -1, -2.5, 3, True])
def test_numbers_and_plain_text_stay_as_they_are(value):
    assert csvsafe.defuse(value) == value and type(csvsafe.defuse(value)) is type(value)


def test_none_is_an_empty_cell():
    assert csvsafe.csv_cell(None) == "" and csvsafe.defuse(None) is None


def test_curation_exports_use_the_one_rule():
    from curation.exports.common import csv_cell

    for v in [*HOSTILE, *PLAIN, None, -1, 2.5]:
        assert csv_cell(v) == csvsafe.csv_cell(v), v


def test_studies_dashboard_uses_the_one_rule():
    from studies.exports import write_csv

    values = [*HOSTILE, *PLAIN, None, -1, 2.5]
    rows = list(csv.reader(io.StringIO(write_csv(["a"], [[v] for v in values]))))
    assert rows == [["a"], *[[str(csvsafe.csv_cell(v))] for v in values]]


def metric(value, **extra):
    return {"metric": "krippendorff_alpha", "value": value, "ci": [-0.5, 0.25], "n_items": 3, **extra}


def test_the_agreement_report_csv_defuses_strata_and_rater_names():
    from agreement.services import report_csv

    result = {
        "fields": {
            "q1": {
                "level": "ordinal",
                "humans_vs_humans": {"krippendorff_alpha": metric(-0.25)},
                "judges_vs_humans": {
                    "=1+1": {
                        "vs_human_mean": {"pearson": {**metric(0.5), "metric": "pearson"}},
                    }
                },
                "strata": {"country": {"@SUM(A1)": {"humans_vs_humans": {"krippendorff_alpha": metric(-0.125)}}}},
            }
        }
    }
    rows = list(csv.DictReader(io.StringIO(report_csv(result))))
    assert {r["value"] for r in rows} == {"-0.25", "0.5", "-0.125"}  # numbers stay numbers
    assert {r["ci_low"] for r in rows} == {"-0.5"}
    [stratum] = [r for r in rows if r["stratum"]]
    assert stratum["stratum"] == "'@SUM(A1)"
    judge = [r for r in rows if "judges_vs_humans" in r["section"]]
    assert judge and all(not r["section"].startswith(csvsafe.FORMULA_START) for r in judge)
    assert all(not v.startswith(("=", "+", "@", "\t", "\r")) for r in rows for v in r.values() if v)
    # a formula in any cell position is quoted
    assert all(
        not v.startswith("-") or csvsafe.PLAIN_NUMBER.fullmatch(v) or v.startswith("'")
        for r in rows
        for v in r.values()
        if v
    )


@pytest.mark.django_db
def test_the_study_dashboard_csv_defuses_names(settings, tmp_path):
    from django.test import Client

    from tests.annotation.factories import jsonl, make_project, make_user, turing_records

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEDIA_ROOT = tmp_path / "media"
    owner = make_user("owner", researcher=True)
    annotators = [make_user("=1+1"), make_user("@SUM(A1)"), make_user("-2+3"), make_user("-7")]
    project = make_project("cqbench.turing", owner=owner, annotators=annotators, k=1)
    from annotation import importing

    assert importing.import_items(project=project, data=jsonl(turing_records(4)), data_format="jsonl").ok
    c = Client()
    c.force_login(owner)
    r = c.get(f"/projects/{project.id}/dashboard/annotators.csv")
    assert r.status_code == 200
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert sorted(row["name"] for row in rows) == ["'-2+3", "'=1+1", "'@SUM(A1)", "-7"]
    assert all(row["assigned"].isdigit() for row in rows)  # counts stay numbers


def test_the_validation_tables_csv_defuses_labels():
    """The validation report's CSV (API renderer and command) writes a judge named like a formula
    as text; the numbers stay numbers."""
    import csv as csvmod
    import io

    from agreement.api import CSVTablesRenderer
    from hvstats.tables import Cell, Row, Table, to_json

    table = Table(
        key="t",
        title="=1+1",
        columns=("Pearson r",),
        rows=(Row('=HYPERLINK("http://x")', (Cell(-0.25, (-0.4, -0.1), 30),)),),
    )
    body = {"status": "done", "tables": to_json([table])}
    text = CSVTablesRenderer().render(body).decode()
    rows = list(csvmod.DictReader(io.StringIO(text)))
    assert rows[0]["row"] == '\'=HYPERLINK("http://x")' and rows[0]["table"] == "t"
    assert rows[0]["value"] == "-0.25" and rows[0]["ci_low"] == "-0.4"


# ------------------------------------------------------------------ issue 23, finding 1: line breaks
#: an annotator's free-text answer: a bare CR starts a new row for readers that split on it
BREAK = "fine\r=cmd|' /C calc'!A0"
BREAKS = [BREAK, "ok\n+1+1", "a\r\n@SUM(A1)", "x\rb,=HYPERLINK(1)", 'q\n"=1+1', "t\r\t=1", "n\r-2+3"]


def _cells_of_line(line: str) -> list[str]:
    """The cells a spreadsheet reads from one line: split on commas outside quotes; a quote at a
    cell's start opens quoting ("" inside is one quote); an unclosed quote ends at the line end."""
    cells, cell, quoted, at_start, i = [], [], False, True, 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"' and line[i + 1 : i + 2] == '"':
                cell.append('"')
                i += 1
            elif ch == '"':
                quoted = False
            else:
                cell.append(ch)
        elif ch == '"' and at_start:
            quoted, at_start = True, False
        elif ch == ",":
            cells.append("".join(cell))
            cell, at_start = [], True
        else:
            cell.append(ch)
            at_start = False
        i += 1
    cells.append("".join(cell))
    return cells


def spreadsheet_rows(text: str) -> list[list[str]]:
    """Every row any reader may see in ``text``: Python's ``csv`` reader (line breaks on \\r, \\n
    and \\r\\n outside quotes), and a naive reader splitting lines on \\r, \\n and \\r\\n regardless
    of quotes and then splitting each line into cells."""
    import re

    honest = list(csv.reader(io.StringIO(text, newline="")))
    naive = [_cells_of_line(line) for line in re.split(r"\r\n|\r|\n", text)]
    return honest + naive


def assert_spreadsheet_safe(text: str) -> None:
    """No cell of any row either reader sees starts a formula (numbers written as text aside)."""
    bad = [
        (row, cell)
        for row in spreadsheet_rows(text)
        for cell in row
        if cell.startswith(csvsafe.FORMULA_START) and not csvsafe.PLAIN_NUMBER.fullmatch(cell)
    ]
    assert not bad, bad[:5]


def assert_line_breaks_quoted(text: str) -> None:
    """Rows end in \\r\\n and every line break inside a value is inside quotes: Python's reader
    with \\r\\n rows sees as many rows as the text has \\r\\n outside quotes."""
    outside, quoted = [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted:
            outside.append(ch)
    bare = "".join(outside)
    assert bare.replace("\r\n", "") == bare.replace("\r\n", "").replace("\r", "").replace("\n", ""), (
        "a line break outside quotes that is not a row end"
    )


def test_the_one_writer_defuses_the_line_after_a_break():
    buf = io.StringIO(newline="")
    w = csvsafe.writer(buf)
    w.writerow(["id", "value"])
    for i, v in enumerate([*BREAKS, *HOSTILE, *PLAIN, -1, 2.5, None]):
        w.writerow([i, v])
    text = buf.getvalue()
    assert_spreadsheet_safe(text)
    assert_line_breaks_quoted(text)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[1] == ["0", "fine\r'=cmd|' /C calc'!A0"]  # one row, the break kept inside the cell
    assert len(rows) == 1 + len(BREAKS) + len(HOSTILE) + len(PLAIN) + 3
    assert [r[1] for r in rows[-3:]] == ["-1", "2.5", ""]
    assert "fine\r=cmd" not in text


@pytest.mark.parametrize("value", BREAKS)
def test_defuse_is_idempotent_and_keeps_the_text(value):
    once = csvsafe.defuse(value)
    assert csvsafe.defuse(once) == once
    assert once.replace("'", "") == value.replace("'", "")


def test_the_one_writer_writes_every_csv():
    """No module of the platform writes CSV but through ``core.csvsafe`` (the pure ``hvstats``
    package takes the writer from its caller; its fallback is for use outside the platform)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in {"tests", ".venv", "perf", "node_modules"} or rel.as_posix() in {
            "core/csvsafe.py",
            "hvstats/tables.py",
        }:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"csv\.(writer|DictWriter)\(", text):
            offenders.append(rel.as_posix())
    assert not offenders, offenders


def test_the_agreement_report_csv_survives_line_breaks():
    from agreement.services import report_csv

    result = {
        "fields": {
            "q1": {
                "level": "ordinal",
                "humans_vs_humans": {"krippendorff_alpha": metric(-0.25)},
                "judges_vs_humans": {BREAK: {"vs_human_mean": {"pearson": {**metric(0.5), "metric": "pearson"}}}},
                "strata": {"country": {"ok\n+1+1": {"humans_vs_humans": {"krippendorff_alpha": metric(-0.125)}}}},
            }
        }
    }
    text = report_csv(result)
    assert_spreadsheet_safe(text)
    assert_line_breaks_quoted(text)
    assert {r["value"] for r in csv.DictReader(io.StringIO(text, newline=""))} == {"-0.25", "0.5", "-0.125"}


def test_the_validation_tables_csv_survives_line_breaks():
    from agreement.api import CSVTablesRenderer
    from hvstats.tables import Cell, Row, Table, to_json

    table = Table(key="t", title="x", columns=(BREAK,), rows=(Row("a\r\n@SUM(A1)", (Cell(-0.25, (-0.4, -0.1), 30),)),))
    text = CSVTablesRenderer().render({"status": "done", "tables": to_json([table])}).decode()
    assert_spreadsheet_safe(text)
    assert_line_breaks_quoted(text)
    [row] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert row["value"] == "-0.25" and row["row"] == "a\r\n'@SUM(A1)"


def test_the_ahead_tables_csv_uses_the_one_writer():
    from hvstats.tables import Cell, Row, Table, to_csv

    table = Table(key="t", title="x", columns=("c",), rows=(Row(BREAK, (Cell(0.5, None, 3),)),))
    text = to_csv([table], csvsafe.dict_writer)
    assert_spreadsheet_safe(text)
    assert_line_breaks_quoted(text)


@pytest.mark.django_db
def test_the_study_dashboard_csvs_survive_line_breaks(settings, tmp_path):
    from django.test import Client

    from annotation import importing
    from annotation.models import Rater
    from tests.annotation.factories import jsonl, make_project, make_user, turing_records

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEDIA_ROOT = tmp_path / "media"
    owner = make_user("owner", researcher=True)
    annotators = [make_user("ann1"), make_user("ann2")]
    project = make_project("cqbench.turing", owner=owner, annotators=annotators, k=1)
    assert importing.import_items(project=project, data=jsonl(turing_records(4)), data_format="jsonl").ok
    for i, rater in enumerate(Rater.objects.filter(user__in=annotators)):
        rater.attributes = {"note": BREAKS[i], "x": "y\r+1+1"}
        rater.save(update_fields=["attributes"])
    c = Client()
    c.force_login(owner)
    for table in ("annotators", "strata", "throughput"):
        r = c.get(f"/projects/{project.id}/dashboard/{table}.csv")
        assert r.status_code == 200
        text = r.content.decode()
        assert_spreadsheet_safe(text)
        assert_line_breaks_quoted(text)
    text = c.get(f"/projects/{project.id}/dashboard/annotators.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(rows) == 2 and all(row["assigned"].isdigit() for row in rows)
