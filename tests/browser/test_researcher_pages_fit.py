"""Every researcher page fits its screen (issue 25): the ValueGround demo with two judges that have
run, a drawn sample and a plan, walked in real headless Chromium at 390 px and 1,280 px, in English,
Simplified Chinese and German. A page wider than the window fails, whatever makes it so (a judge's
raw output on one line, Table 4 with two judges, the plan's progress per stratum, a German table
header running out of its card).

The pages are found by following the links of the project page and of the pages it links to
(one page per kind of address: ``/judges/runs/<n>/`` once, whatever ``n``), so a page added
later is walked too."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from annotation.models import Project
from benchmarks.registry import PRESETS
from demo.management.commands import seed_demo
from judges import runs
from judges.configuration import create_judge_config
from judges.execution import execute_judge_chunk
from judges.models import JudgeConfig, JudgeOutput, JudgeRun
from studies import plans, sampling

from .test_keyboard_annotation import PHONE, horizontal_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRESET = "valueground.pair_quality"
WIDTHS = (PHONE, {"width": 1280, "height": 800})
LANGUAGES = ("en", "zh-hans", "de")
#: links that are downloads or actions, not pages
NOT_PAGES = re.compile(r"(\.csv|\.json|\.jsonl|\.md|\.tex|\.zip|/download/|/api/|/export|format=)")


def kind_of(path: str) -> str:
    """The kind of address: its numbers replaced (one page of each kind is enough)."""
    return re.sub(r"\d+", "N", path)


@pytest.fixture
def demo_with_judges(settings, tmp_path, monkeypatch) -> Project:
    """The ValueGround demo, its SSIM judge and a second one, both run over every item (in this
    process), a sample by country x generator and a pooled plan over it."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast demo logins
    monkeypatch.setattr(seed_demo, "PRESETS", {PRESET: PRESETS[PRESET]})
    call_command("seed_demo", stdout=io.StringIO())
    project = Project.objects.get(preset_key=PRESET, name__startswith="Demo: ")
    first = JudgeConfig.objects.get(project=project)
    create_judge_config(
        project=project,
        name="SSIM pair-match judge, stricter thresholds",
        backend=first.backend,
        model_id=first.model_id,
        params={**first.params, "q3_thresholds": [0.85, 0.9]},
        created_by=project.created_by,
    )
    monkeypatch.setattr(runs, "enqueue_chunks", lambda **kw: 0)  # run here, not on a worker
    for config in JudgeConfig.objects.filter(project=project):
        run = runs.start_judge_run(config=config, user=project.created_by)
        execute_judge_chunk(run_id=run.id, item_ids=run.item_ids)
    assert JudgeRun.objects.filter(project=project, status=JudgeRun.Status.DONE).count() == 2
    # what a language model says: one long line (the run page was 1,720 px wide at 1,280)
    said = '{"reasoning": "' + "the two images differ only in the cue the question asks about " * 12 + '"}'
    JudgeOutput.objects.filter(run__project=project).update(raw_output=said)
    sample = sampling.draw_sample(
        project=project, name="by country and backbone", strata_keys=["country", "generator"], per_stratum=2, seed=1
    )
    plans.create_plan(sample=sample, name="pooled plan", k=2)
    return project


#: the tables that must fit a wide screen whole, not scroll inside their box: the paper's tables,
#: a judge's outputs, a plan's progress per stratum, the project's progress
WHOLE = "table[data-table], table.outputs, #plan-strata, #annotator-progress"
#: boxes whose content runs out of them (a German header out of its card, a table cut off); with
#: ``strict`` (the wide screen) a box of a WHOLE table that scrolls counts too
RUN_OUT = """([strict, wholeTables]) => {
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
        + (el.dataset.testid ? '[' + el.dataset.testid + ']' : '')
        + (el.dataset.table ? '[' + el.dataset.table + ']' : '')
        + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
    const out = {};
    for (const el of document.querySelectorAll('main .card, main section, main .table-wrap, main table, main pre')) {
        const ox = getComputedStyle(el).overflowX;
        const whole = strict && el.matches('.table-wrap') && el.querySelector(wholeTables);
        if (!whole && (ox === 'auto' || ox === 'scroll')) continue;
        if (el.scrollWidth > el.clientWidth + 1) out[name(el)] = el.scrollWidth - el.clientWidth;
    }
    return out;
}"""


def log_in(page, base: str) -> None:
    page.goto(base + "/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher")  # demo password == username
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()


def researcher_pages(page, base: str, project: Project) -> list[str]:
    """The project's pages reachable in two clicks from its page, one per kind of address."""
    start = f"/projects/{project.id}/"
    seen, todo, found = {kind_of(start)}, [start], [start]
    for _depth in range(2):
        nxt = []
        for path in todo:
            page.goto(base + path)
            hrefs = page.evaluate(
                "() => Array.from(document.querySelectorAll('main a[href]'), (a) => a.getAttribute('href'))"
            )
            for href in hrefs:
                href = href.split("#")[0].split("?")[0]
                if not href.startswith(start) or NOT_PAGES.search(href) or kind_of(href) in seen:
                    continue
                seen.add(kind_of(href))
                found.append(href)
                nxt.append(href)
        todo = nxt
    return found


def test_every_researcher_page_fits_both_screens_in_every_language(demo_with_judges, page, live_server):
    project = demo_with_judges
    base = live_server.url
    page.set_viewport_size(WIDTHS[1])
    log_in(page, base)
    paths = researcher_pages(page, base, project)
    kinds = {kind_of(p) for p in paths}
    must = {
        "/projects/N/judges/runs/N/",
        "/projects/N/plans/N/",
        "/projects/N/samples/N/",
        "/projects/N/agreement/",
        "/projects/N/report/",
    }
    assert must <= kinds, sorted(kinds)
    wide = {}
    for language in LANGUAGES:
        page.goto(base + paths[0])
        if page.evaluate("document.documentElement.lang").lower() != language:
            with page.expect_navigation():
                page.click(f"form.languages button[value='{language}']")
        assert page.evaluate("document.documentElement.lang").lower() == language
        for size in WIDTHS:
            page.set_viewport_size(size)
            for path in paths:
                response = page.goto(base + path)
                assert response is not None and response.status == 200, (language, path)
                if over := horizontal_overflow(page):
                    wide[(language, size["width"], path)] = over
                if boxes := page.evaluate(RUN_OUT, [size["width"] > PHONE["width"], WHOLE]):
                    wide[(language, size["width"], path, "boxes")] = boxes
    print("walked:", paths)
    assert wide == {}, f"pages wider than the window (by how many px): {wide}"
