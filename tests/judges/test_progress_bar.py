"""The run page's progress bar shows its percentage (styled, accessible), and its answers part
reloads itself while the run is pending, so answers appear as the worker stores them; both stop
polling once the run has ended."""

import pytest
from django.test import Client

from annotation.models import Item
from judges import configuration, runs
from judges.models import JudgeItemResult, JudgeOutput, JudgeRun

from .helpers import project_with_demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def pending_run(researcher, tmp_path, django_capture_on_commit_callbacks):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    with django_capture_on_commit_callbacks(execute=False):  # no worker: the run stays queued
        run = runs.start_judge_run(config=config)
    return run


def test_progress_part_shows_the_percentage(client, researcher, pending_run):
    run = pending_run
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    half = Item.objects.filter(pk__in=run.item_ids).order_by("id")[: run.total // 2]
    JudgeItemResult.objects.bulk_create(JudgeItemResult(run=run, item=it, status="ok") for it in half)
    client.force_login(researcher)
    r = client.get(f"/projects/{run.project_id}/judges/runs/{run.id}/progress/", headers={"HX-Request": "true"})
    percent = round(100 * (run.total // 2) / run.total)
    assert 0 < percent < 100
    html = r.content.decode()
    assert f'aria-valuenow="{percent}"' in html and f'style="width: {percent}%"' in html
    assert f'data-testid="run-percent">{percent}%<' in html
    assert 'role="progressbar"' in html and 'hx-trigger="every 1s"' in html


def test_answers_part_polls_while_the_run_is_pending_and_stops_after(client, researcher, pending_run):
    run = pending_run
    client.force_login(researcher)
    page = client.get(f"/projects/{run.project_id}/judges/runs/{run.id}/")
    assert f"/projects/{run.project_id}/judges/runs/{run.id}/?part=outputs&amp;page=1" in page.content.decode()
    part_url = f"/projects/{run.project_id}/judges/runs/{run.id}/?part=outputs"

    empty = client.get(part_url, headers={"HX-Request": "true"})
    assert empty.templates[0].name == "judges/_outputs.html"
    assert "No answer yet." in empty.content.decode() and 'hx-trigger="every 2s"' in empty.content.decode()

    item = Item.objects.filter(project_id=run.project_id).order_by("id").first()
    JudgeOutput.objects.create(run=run, item=item, pass_index=0, raw_output="a stored answer")
    filled = client.get(part_url, headers={"HX-Request": "true"})
    assert "a stored answer" in filled.content.decode() and 'hx-trigger="every 2s"' in filled.content.decode()

    runs.cancel_judge_run(run=run)
    ended = client.get(part_url, headers={"HX-Request": "true"})
    assert "a stored answer" in ended.content.decode() and "hx-trigger" not in ended.content.decode()


def test_answers_part_is_the_run_pages_access(researcher, pending_run):
    from tests.annotation.factories import make_user

    run = pending_run
    url = f"/projects/{run.project_id}/judges/runs/{run.id}/?part=outputs"
    outsider = Client()
    outsider.force_login(make_user("outsider", researcher=True))
    assert outsider.get(url).status_code == 404
