"""A large import uploaded from the project page, run by a real Celery worker (Redis broker, the
same PostgreSQL test database), followed in real headless Chromium: the import page's progress
bar shows a percentage that moves while the worker checks and writes the file (htmx polling),
then the report replaces it and the polling stops."""

from __future__ import annotations

import json
import time

import pytest

from annotation.models import ImportJob, Item
from tests.annotation.factories import make_project, make_user

pytestmark = [pytest.mark.browser, pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

#: enough lines that the worker takes seconds over them (the page polls once a second)
LINES = 120_000
WAIT_S = 240
READ_PART = """() => {
  const part = document.getElementById("import-status");
  const bar = part.querySelector("[role=progressbar]");
  const shown = part.querySelector("[data-testid=import-percent]");
  return {
    status: part.querySelector("[data-testid=import-status]").dataset.status,  // the shown text is translated
    value: bar ? bar.getAttribute("aria-valuenow") : null,
    shown: shown ? shown.textContent.trim() : null,
  };
}"""


def big_file(path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(LINES):
            record = {
                "id": f"t{i}",
                "context": f"A conversation about the weather, number {i}. " * 3,
                "human_utterance": f"I think it will rain later, {i}",
                "model_utterance": f"It may rain in the evening, {i}",
                "country": ("Japan", "Germany", "Chile")[i % 3],
            }
            fh.write(json.dumps(record) + "\n")


def test_the_import_bar_moves_while_the_worker_imports(settings, tmp_path, celery_worker_process, page, live_server):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.HV_INLINE_IMPORT_BYTES = 0  # every upload goes to the worker
    researcher = make_user("bar_researcher", researcher=True)
    project = make_project("cqbench.turing", owner=researcher, name="Progress")
    data = tmp_path / "big.jsonl"
    big_file(data)

    js_errors: list[str] = []
    page.on("pageerror", lambda exc: js_errors.append(str(exc)))
    base = live_server.url
    page.goto(base + "/login/")
    page.fill("input[name=username]", "bar_researcher")
    page.fill("input[name=password]", "pw-bar_researcher")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}/projects/{project.id}/")
    page.set_input_files("input[name=data]", str(data))
    with page.expect_navigation(timeout=120_000):
        page.get_by_role("button", name="Import", exact=True).click()
    assert "/imports/" in page.url, page.url

    seen: list[int] = []
    deadline = time.monotonic() + WAIT_S
    while True:
        # one read of the part (htmx swaps it whole once a second)
        state = page.evaluate(READ_PART)
        status = state["status"]
        if state["value"] is not None:
            value = int(state["value"])
            assert state["shown"] == f"{value}%", state
            if not seen or seen[-1] != value:
                seen.append(value)
        if status in ("done", "failed"):
            break
        if not celery_worker_process.alive:
            pytest.fail(f"worker died; log:\n{celery_worker_process.log_tail()}", pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail(f"import still {status} after {WAIT_S} s; seen {seen}", pytrace=False)
        page.wait_for_timeout(100)

    job = ImportJob.objects.get(project=project)
    assert job.status == "done", job.report
    assert Item.objects.filter(project=project).count() == LINES
    assert seen == sorted(seen), seen  # the bar only moves forward
    moving = [v for v in seen if 0 < v < 100]
    assert len(moving) >= 2, seen  # it moved while the worker worked, not only at the ends
    # the report replaced the bar, and the part no longer polls
    assert page.locator("#import-status [role=progressbar]").count() == 0
    assert page.locator("#import-status[hx-get]").count() == 0
    assert f"Imported {LINES} items" in page.inner_text("#import-status")
    assert not js_errors, js_errors
