"""Only the project's researchers (and admins) see and run judges: annotators get 403 on the
pages and 404 from the API; the researcher sees the run page with its progress."""

import pytest
from django.urls import reverse

from judges import configuration, runs

from .helpers import project_with_demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(researcher, annotator, tmp_path, django_capture_on_commit_callbacks):
    project = project_with_demo("cqbench.story", researcher, tmp_path, annotators=[annotator])
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    with django_capture_on_commit_callbacks(execute=False):
        run = runs.start_judge_run(config=config)
    return project, config, run


def test_annotators_get_403_on_judge_pages(client, annotator, setup):
    project, config, run = setup
    client.force_login(annotator)
    for url in (
        reverse("judges", args=[project.id]),
        reverse("judge_run", args=[project.id, run.id]),
        reverse("judge_run_progress", args=[project.id, run.id]),
    ):
        assert client.get(url).status_code == 403
    for url in (
        reverse("judge_start_run", args=[project.id, config.id]),
        reverse("judge_run_cancel", args=[project.id, run.id]),
    ):
        assert client.post(url).status_code == 403
    run.refresh_from_db()
    assert run.status == "queued"


def test_annotators_get_404_from_the_judge_api(client, annotator, setup):
    project, _config, run = setup
    client.force_login(annotator)
    assert client.get(reverse("api_judges", args=[project.id])).status_code == 404
    assert (
        client.post(
            reverse("api_judges", args=[project.id]),
            {"name": "x", "backend": "embedding"},
            content_type="application/json",
        ).status_code
        == 404
    )
    assert client.get(reverse("api_judge_run", args=[run.id])).status_code == 404
    assert client.post(reverse("api_judge_run_cancel", args=[run.id])).status_code == 404
    assert client.get(reverse("api_judge_run_outputs", args=[run.id])).status_code == 404


def test_anonymous_users_are_sent_to_login(client, setup):
    project, _, run = setup
    assert client.get(reverse("judges", args=[project.id])).status_code == 302
    assert client.get(reverse("api_judge_run", args=[run.id])).status_code in (401, 403)


def test_researcher_configures_starts_and_watches_a_run(client, researcher, setup, django_capture_on_commit_callbacks):
    project, config, run = setup
    client.force_login(researcher)
    page = client.get(reverse("judges", args=[project.id]))
    assert page.status_code == 200 and b"minilm" in page.content
    resp = client.post(
        reverse("judges", args=[project.id]),
        {
            "name": "ssim-like",
            "backend": "openai_chat",
            "model_id": "m",
            "parser": "",
            "questions": "naturalness",
            "passes": 3,
            "combine": "majority",
            "params": '{"temperature": 0.7}',
        },
    )
    assert resp.status_code == 302
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        resp = client.post(reverse("judge_start_run", args=[project.id, config.id]), {"sample_size": "2"})
    assert resp.status_code == 302 and len(callbacks) == 1
    detail = client.get(resp.url)
    assert detail.status_code == 200 and b'data-testid="judge-progress"' in detail.content
    assert b"hx-get" in detail.content  # polls while queued / running
    api = client.get(reverse("api_judge_run", args=[run.id])).json()
    assert api["status"] == "queued" and api["remaining"] == run.total
    created = client.post(
        reverse("api_judges", args=[project.id]),
        {"name": "api-judge", "backend": "openai_chat", "model_id": "x", "questions": ["naturalness"]},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["parser"] == "json"
    cancel = client.post(reverse("api_judge_run_cancel", args=[run.id]))
    assert cancel.status_code == 200 and cancel.json()["status"] == "cancelled"
