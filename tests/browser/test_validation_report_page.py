"""The agreement page opens with the protocol's table (issue 10): ValueGround Table 4, built from
ratings stored through the platform (4 annotators and an ensemble judge), is shown above the fold
of a 1280x800 window in real Chromium, nothing is wider than the viewport, the per-field detail
is collapsed, and the download links serve the same numbers."""

from __future__ import annotations

import pytest

from agreement import validation
from hvstats.tables import format_cell
from tests.agreement import test_paper_tables as paper

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

env = paper._env
valueground = paper.valueground


def test_table4_is_above_the_fold_and_nothing_is_wider_than_the_viewport(valueground, page, live_server):
    project, ids, _humans, judges, pos = valueground
    paper._store_ensemble(project, ids, pos, judges)
    want = validation.compute_tables(project, bootstrap=200, seed=0)[0]

    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_server.url + "/login/")
    page.fill("input[name=username]", project.created_by.username)
    page.fill("input[name=password]", "pw-" + project.created_by.username)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    response = page.goto(f"{live_server.url}/projects/{project.id}/agreement/?bootstrap=200&seed=0")
    assert response is not None and response.status == 200

    table = page.locator('table[data-table="valueground-table4"]')
    box = table.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800, box  # above the fold
    assert box["x"] + box["width"] <= 1280, box
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280  # no horizontal scrolling
    # the shown numbers are the computed ones, in the researcher's words
    text = table.inner_text()
    assert "LLM ensemble (ensemble) vs mean human" in text and "Human agreement" in text
    total = table.locator("tbody tr", has_text="Total").locator("td").all_inner_texts()
    assert [" ".join(t.split()) for t in total] == [  # the interval on a second line of its cell
        format_cell(c) for c in next(r for r in want.rows if r.label == "Total").cells
    ]
    # one line per judge, then the per-field detail collapsed (heatmaps only on demand)
    assert "LLM ensemble (ensemble)" in page.locator('[data-testid="judge-summary"]').inner_text()
    assert page.locator("details.field-group[open]").count() == 0
    assert not page.locator('[data-testid="heatmap"]').first.is_visible()
    page.locator('details.field-group[data-group="total"] > summary').click()
    assert page.locator('section[data-field="total"]').is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    # the download links answer with the same table
    href = page.get_by_role("link", name="Markdown").get_attribute("href")
    md = page.request.get(live_server.url + href).text()
    assert f"| Total | {' | '.join(format_cell(c) for c in want.rows[-1].cells)} |" in md
