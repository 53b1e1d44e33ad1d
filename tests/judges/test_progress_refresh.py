"""The run page polls its progress part while the run is active; once the run has ended, that
poll tells htmx to reload the page, so the answers, failures and re-run button appear."""

import pytest
from django.urls import reverse

from judges import configuration, runs

from .helpers import project_with_demo

pytestmark = pytest.mark.django_db


def test_progress_poll_reloads_the_run_page_once_the_run_ended(
    client, researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    with django_capture_on_commit_callbacks(execute=False):
        run = runs.start_judge_run(config=config)
    client.force_login(researcher)
    url = reverse("judge_run_progress", args=[project.id, run.id])

    active = client.get(url, headers={"HX-Request": "true"})
    assert active.status_code == 200 and "HX-Refresh" not in active
    assert b'hx-trigger="every 1s"' in active.content

    runs.cancel_judge_run(run=run)
    ended = client.get(url, headers={"HX-Request": "true"})
    assert ended.status_code == 200 and ended["HX-Refresh"] == "true"
    assert b"hx-trigger" not in ended.content
    plain = client.get(url)  # not from htmx (e.g. a script): no reload instruction
    assert plain.status_code == 200 and "HX-Refresh" not in plain
