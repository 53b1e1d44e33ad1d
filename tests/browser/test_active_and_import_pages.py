"""The active-sample page and the annotation-import pages in German and Chinese (issue 25): on the
demo's simulated study, with an active sample of two rounds drawn from a judge's confidence,
ratings made in another tool imported, and a second file uploaded to its preview, each page is
walked in real headless Chromium at 390 px and 1,280 px. It is no wider than the window, no
card or table runs out of its box, and it shows its heading in the page's language (the
translation test, tests/test_researcher_pages_translated.py, checks every text of the same
pages on the server)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from benchmarks.registry import PRESETS
from demo.management.commands import seed_demo
from tests.test_researcher_pages_translated import simulated_study

from .test_keyboard_annotation import PHONE, horizontal_overflow
from .test_researcher_pages_fit import RUN_OUT, WHOLE, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (PHONE, {"width": 1280, "height": 800})
#: what each page's <h1> says, per language (the English never)
HEADINGS = {
    "active": {"de": "Aktive Stichprobe:", "zh-hans": "主动样本：", "en": "Active sample:"},
    "imports": {
        "de": "Menschliche Annotationen importieren",
        "zh-hans": "导入人工标注",
        "en": "Import human annotations",
    },
    "import": {
        "de": "Import menschlicher Annotationen in",
        "zh-hans": "导入人工标注",
        "en": "Import of human annotations into",
    },
}
PREVIEW = {"de": "Vorschau", "zh-hans": "预览", "en": "Preview"}


@pytest.fixture
def study(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast demo logins
    monkeypatch.setattr(seed_demo, "PRESETS", {"valueground.pair_quality": PRESETS["valueground.pair_quality"]})
    call_command("seed_demo", stdout=io.StringIO())
    return simulated_study()


def check(page, name: str, language: str, width: int) -> dict:
    """What is wrong with the page shown: wider than the window, boxes run out, the heading."""
    wrong = {}
    if over := horizontal_overflow(page):
        wrong["wider by px"] = over
    if boxes := page.evaluate(RUN_OUT, [width > PHONE["width"], WHOLE]):
        wrong["boxes"] = boxes
    heading = page.locator("main h1").inner_text()
    if HEADINGS[name][language] not in heading or HEADINGS[name]["en"] in heading:
        wrong["heading"] = heading
    return wrong


def test_active_sample_and_annotation_import_pages_fit_and_are_translated(study, page, live_server, tmp_path):
    s = study["study"]
    judge = study["active"].design["judge"]["rater"]
    base = live_server.url
    pages = {
        "active": f"/projects/{s.id}/active/?judge={judge}&source=confidence:confidence&field=q1",
        "imports": f"/projects/{s.id}/annotation-imports/",
        "import": f"/annotation-imports/{study['annotation_import'].id}/",
    }
    # a second file of ratings made in another tool, uploaded through the page to its preview
    upload = tmp_path / "second-batch.csv"
    upload.write_bytes(study["second_file"])
    page.set_viewport_size(WIDTHS[1])
    log_in(page, base)
    wrong = {}
    for language in ("de", "zh-hans"):
        page.goto(base + pages["imports"])
        with page.expect_navigation():
            page.click(f"form.languages button[value='{language}']")
        assert page.evaluate("document.documentElement.lang").lower() == language
        for size in WIDTHS:
            page.set_viewport_size(size)
            for name, path in pages.items():
                response = page.goto(base + path)
                assert response is not None and response.status == 200, (language, path)
                if name == "active":  # the chosen uncertainty's distribution and the series drawn
                    assert page.locator("#uncertainty-distribution svg.histogram").count() == 1
                    assert page.locator("section.active-estimates").count() == 1
                if problems := check(page, name, language, size["width"]):
                    wrong[(language, size["width"], name)] = problems
            # the preview of an upload (a POST renders it)
            page.goto(base + pages["imports"])
            form = page.locator("form[enctype='multipart/form-data']")
            form.locator("input[type=file]").set_input_files(str(upload))
            form.locator("select[name=format]").select_option("csv")
            with page.expect_navigation():
                form.locator("button[type=submit]").click()
            preview = page.get_by_test_id("annotation-import-preview")
            assert preview.is_visible(), (language, size)
            assert PREVIEW[language] in preview.locator("h2").inner_text()
            assert page.get_by_test_id("annotation-import-counts").inner_text().strip()
            if problems := check(page, "imports", language, size["width"]):
                wrong[(language, size["width"], "preview")] = problems
    assert wrong == {}, f"pages wider than the window, boxes run out or headings untranslated: {wrong}"
