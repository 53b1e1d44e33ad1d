"""Issue 34 (part): the platform's agreement report says what the command says about degenerate
and small data (``hvstats.notes``): the API's JSON and CSV, the agreement page (in the UI's
language), the printable report, and the validation report's LaTeX. The items a note rests on
are counted here from the ratings frame, independently of the platform."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse
from django.utils import translation

from agreement import selectors
from agreement.presentation import note_sentences
from hvstats.notes import SMALL_SAMPLE_ITEMS
from tests.agreement import test_paper_tables as paper
from tests.agreement import test_platform_report as platform
from tests.annotation.factories import make_user

pytestmark = pytest.mark.django_db
story_project = platform.story_project
valueground = paper.valueground
_env = paper._env


def items_with_two_human_ratings(project, field: str) -> int:
    df = selectors.ratings_frame(project)
    sub = df[(df["field"] == field) & (df["rater_kind"] == "human")]
    return int((sub.groupby("item_pk")["rater"].nunique() >= 2).sum())


def test_the_api_json_and_csv_carry_the_small_sample_note(client, story_project):
    n = items_with_two_human_ratings(story_project, "naturalness")
    assert n == 12 < SMALL_SAMPLE_ITEMS
    client.force_login(story_project.owner)
    url = reverse("api_agreement_report", args=[story_project.id])
    body = client.get(url, {"format": "json", "field": "naturalness", "bootstrap": 0}).json()
    small = [x for x in body["result"]["notes"] if x["code"] == "small_sample" and x["judge"] is None]
    assert small and small[0]["n_items"] == n and small[0]["field"] == "naturalness"
    assert "krippendorff_alpha" in small[0]["statistic"]
    assert body["result"]["fields"]["naturalness"]["humans_vs_humans"]["krippendorff_alpha"]["n_items"] == n
    rows = list(
        csv.DictReader(io.StringIO(client.get(url, {"format": "csv", "field": "naturalness"}).content.decode()))
    )
    noted = [r for r in rows if r["section"] == "notes" and r["metric"] == "small_sample"]
    assert noted and noted[0]["n_items"] == str(n) and "fewer than 30" in noted[0]["reason"]


def test_the_page_and_the_printable_report_show_the_notes_translated(client, story_project):
    client.force_login(story_project.owner)
    query = {"field": "naturalness", "bootstrap": 0}
    html = client.get(reverse("agreement_report", args=[story_project.id]), query).content.decode()
    assert 'data-testid="report-notes"' in html and 'data-note="small_sample"' in html
    assert "on 12 items, fewer than 30: a small sample" in html
    printable = client.get(f"/projects/{story_project.id}/report/", query, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert 'data-testid="report-notes"' in printable and "Diese Zahlen mit Vorsicht lesen" in printable
    assert "auf 12 Items, weniger als 30: eine kleine Stichprobe" in printable
    note = {
        "code": "exact_interval",
        "field": "flag",
        "stratum": "country=JP",
        "judge": "j",
        "statistic": "human-only mean",
    }
    with translation.override("zh-hans"):
        (zh,) = note_sentences([{**note, "value": 0.0, "n_items": 25}])
    assert (
        zh["text"].startswith("flag (country=JP)：j：human-only mean 为 25 个条目中的 0%")
        and "Clopper-Pearson" in zh["text"]
    )


def test_the_notes_stay_with_the_projects_researchers(client, story_project):
    url = reverse("api_agreement_report", args=[story_project.id])
    client.force_login(story_project.annotator_users[0])
    assert client.get(url, {"field": "naturalness"}).status_code == 403
    client.force_login(make_user("notes-outsider", researcher=True))
    assert client.get(url, {"field": "naturalness"}).status_code == 404
    client.force_login(story_project.annotator_users[0])
    assert client.get(f"/projects/{story_project.id}/report/").status_code in (403, 404)


def test_the_validation_reports_latex_names_the_small_coefficients(client, valueground):
    project, ids, _humans, judges, pos = valueground
    paper._store_ensemble(project, ids, pos, judges)
    client.force_login(project.created_by)
    url = reverse("api_validation_report", args=[project.id])
    body = client.get(url, {"format": "json", "bootstrap": 0}).json()
    tables = body["tables"]
    # independently: every coefficient cell (format "r") on fewer than 30 items, table by table
    small = {
        t["key"]: [
            (r["label"], col, c["n"])
            for r in t["rows"]
            for col, c in zip(t["columns"], r["cells"], strict=True)
            if c["format"] == "r" and c["value"] is not None and c["n"] is not None and c["n"] < 30
        ]
        for t in tables
    }
    assert any(small.values()), "the fixture has strata of 18 items"
    for t in tables:
        noted = [x for x in t["notes"] if x.startswith("Small samples, fewer than 30 items")]
        cells = small[t["key"]]
        if not cells:
            assert noted == []
            continue
        rows = ", ".join(dict.fromkeys(r for r, _, _ in cells))
        columns = ", ".join(dict.fromkeys(c for _, c, _ in cells))
        least, most = min(n for *_, n in cells), max(n for *_, n in cells)
        assert noted == [
            f"Small samples, fewer than 30 items (the interval is rough): {len(cells)} coefficients on {least} to "
            f"{most} items, in the rows {rows}; columns {columns}."
        ]
    # the JSON's top-level notes (issue 34): one small-sample note per table with small cells, its least items
    top = [x for x in body["notes"] if x["code"] == "small_sample"]
    assert {x["table"]: x["n_items"] for x in top} == {
        k: min(n for *_, n in cells) for k, cells in small.items() if cells
    }
    assert all(x["text"] in next(t["notes"] for t in tables if t["key"] == x["table"]) for x in top)
    latex = client.get(url, {"format": "latex", "bootstrap": 0}).content.decode()
    assert "Small samples, fewer than 30 items (the interval is rough)" in latex
