"""The printable validation report (issue 25): ``/projects/<id>/report/``, linked from the project
page, holds ValueGround's Table 4 with two judges (one compact cell per value, its interval on a
second line), the verdicts and the study's settings, with the downloads; it fits 390 px and
1,280 px in English, Simplified Chinese and German (Table 4 whole at 1,280 px, not scrolled),
and printed it shows no navigation.

With ``HV_SCREENSHOTS=1`` the six viewport screenshots of docs/researcher-guide.md are written
to docs/screenshots/ (otherwise to a scratch folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.agreement import test_paper_tables as paper

from .test_keyboard_annotation import PHONE, horizontal_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

env = paper._env
valueground = paper.valueground
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
TABLE4 = 'table[data-table="valueground-table4"]'


def test_the_report_page_prints_table4_with_two_judges_in_every_language(valueground, page, live_server, tmp_path):
    project, _ids, _humans, judges, pos = valueground
    for name in ("judge-a", "judge-b"):
        paper.submit_judge(
            project, name, lambda e, name=name: {f: int(judges[name][f][pos[e]]) for f in paper.VG_FIELDS}
        )
    shots = DOCS if os.environ.get("HV_SCREENSHOTS") else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(base + "/login/")
    page.fill("input[name=username]", project.created_by.username)
    page.fill("input[name=password]", "pw-" + project.created_by.username)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}/projects/{project.id}/")
    with page.expect_navigation():
        page.get_by_test_id("report-link").click()
    url = f"{base}/projects/{project.id}/report/?bootstrap=200&seed=0"
    for language in ("en", "zh-hans", "de"):
        if page.evaluate("document.documentElement.lang").lower() != language:
            with page.expect_navigation():
                page.click(f"form.languages button[value='{language}']")
        for size in (PHONE, {"width": 1280, "height": 800}):
            page.set_viewport_size(size)
            response = page.goto(url)
            assert response is not None and response.status == 200
            table = page.locator(TABLE4)
            assert table.is_visible()
            head = table.locator("thead").inner_text()
            assert "judge-a" in head and "judge-b" in head, head
            assert table.locator("td .ci").count() > 0  # the interval on a second line
            assert horizontal_overflow(page) == 0, (language, size)
            if size["width"] == 1280:  # whole, not scrolled inside its box
                assert page.evaluate(
                    f"() => {{ const w = document.querySelector('{TABLE4}').parentElement;"
                    " return w.scrollWidth <= w.clientWidth + 1; }"
                ), language
            assert page.get_by_test_id("study-settings").is_visible()
            assert page.get_by_test_id("verdict-panel").count() == 1
            assert page.locator("a[href*='validation-report'][href*='format=']").count() == 4
            assert page.get_by_test_id("field-detail").count() == 0  # the agreement page's detail stays there
            page.screenshot(path=str(shots / f"report-{language}-{size['width']}.png"))
    # printed: no navigation, black on white, the table there
    page.emulate_media(media="print")
    assert not page.locator("header.top").is_visible()
    assert page.locator(TABLE4).is_visible()
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    page.emulate_media(media="screen")
    # the downloads answer with the tables
    href = page.locator("a[href*='format=markdown']").get_attribute("href")
    assert "| Total |" in page.request.get(base + href).text()
