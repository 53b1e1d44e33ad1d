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
    assert csvsafe.defuse(text) == "'" + text
    assert csvsafe.csv_cell(text) == "'" + text


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
    from stats.tables import Cell, Row, Table, to_json

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
