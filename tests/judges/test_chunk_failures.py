"""Issue 23, finding 2: a judge chunk that raises fails its items with the exception at once, and
the run ends (or goes on with its other chunks): it is never held "running" until the reaper.
Control characters in a judge's URL or key name are refused when the judge is created (service,
API and form), and a key holding one is never sent."""

import json

import pytest
from django.urls import reverse

from core.errors import DomainError
from judges import administration, configuration, endpoints, runs, tasks
from judges.backends.openai_chat import OpenAIChatBackend
from judges.models import JudgeConfig, JudgeItemResult, JudgeRun

from .chat_server import ChatServer
from .helpers import project_with_demo

pytestmark = pytest.mark.django_db
FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 1}


@pytest.fixture
def project(researcher, tmp_path):
    return project_with_demo("cultivate.faithfulness", researcher, tmp_path, n=4)


def start(config, django_capture_on_commit_callbacks, **kw) -> JudgeRun:
    with django_capture_on_commit_callbacks(execute=False):
        return runs.start_judge_run(config=config, **kw)


def chunks(run):
    return [run.item_ids[s : s + run.chunk_size] for s in range(0, len(run.item_ids), run.chunk_size)]


def test_a_chunk_that_raises_fails_its_items_and_ends_the_run_at_once(
    project, django_capture_on_commit_callbacks, monkeypatch
):
    def boom(self, items, passes):
        raise RuntimeError("the HTTP client refused the URL\nsecond line")

    monkeypatch.setattr(OpenAIChatBackend, "judge", boom)
    with ChatServer() as server:
        config = configuration.create_judge_config(
            project=project, name="j", backend="openai_chat", model_id="m", params={**FAST, "base_url": server.base_url}
        )
        run = start(config, django_capture_on_commit_callbacks, chunk_size=2)
        first, second = chunks(run)
        assert tasks.run_judge_chunk(run.id, first) == "running"  # the other chunk still to come
        failed = JudgeItemResult.objects.filter(run=run, item_id__in=first)
        assert failed.count() == 2 and {r.status for r in failed} == {"failed"}
        # the reason, on one line, without the exception's type name (core.errors.public_text)
        assert all("the HTTP client refused the URL second line" in r.error for r in failed)
        assert not any("RuntimeError" in r.error for r in failed)
        assert tasks.run_judge_chunk(run.id, second) == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "no item could be judged" in run.message
    assert run.results.filter(status="failed").count() == run.total == 4
    assert administration.delete_blockers(config) == []  # not held running: the judge can be deleted


def test_a_chunk_that_raises_lets_the_others_finish_the_run(project, django_capture_on_commit_callbacks, monkeypatch):
    real = OpenAIChatBackend.judge
    calls = []

    def once(self, items, passes):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("Invalid non-printable ASCII character in URL")
        return real(self, items, passes)

    monkeypatch.setattr(OpenAIChatBackend, "judge", once)
    with ChatServer() as server:
        config = configuration.create_judge_config(
            project=project, name="j", backend="openai_chat", model_id="m", params={**FAST, "base_url": server.base_url}
        )
        run = start(config, django_capture_on_commit_callbacks, chunk_size=2)
        for chunk in chunks(run):
            tasks.run_judge_chunk(run.id, chunk)
    run.refresh_from_db()
    assert run.status == "done"
    statuses = dict(run.results.values_list("item_id", "status"))
    assert [statuses[i] for i in run.item_ids] == ["failed", "failed", "ok", "ok"]
    [error] = set(run.results.filter(status="failed").values_list("error", flat=True))
    assert "Invalid non-printable ASCII character in URL" in error and "ValueError" not in error


def test_a_chunk_of_an_ended_run_records_nothing(project, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr(OpenAIChatBackend, "judge", lambda self, items, passes: 1 / 0)
    with ChatServer() as server:
        config = configuration.create_judge_config(
            project=project, name="j", backend="openai_chat", model_id="m", params={**FAST, "base_url": server.base_url}
        )
        run = start(config, django_capture_on_commit_callbacks, chunk_size=2)
        runs.cancel_judge_run(run=run)
        assert tasks.run_judge_chunk(run.id, chunks(run)[0]) == "cancelled"
    assert not run.results.exists()


# ------------------------------------------------------------------------------ control characters
BAD_URLS = [
    "http://127.0.0.1:9/v1\n",
    "http://127.0.0.1:9/v1\r\nX-Injected: 1",
    "http://127.0.0.1:9/\tv1",
    "http://127.0.0.1:9/v1\x00",
    "http://127.0.0.1:9/v1\x7f",
    "http://127.0.0.1:9/v1\u2028",
    "http://127.0.\n0.1:9/v1",
]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_url_with_a_control_character_is_refused_at_creation(project, url):
    with pytest.raises(DomainError, match=r"control characters|NUL"):  # NUL: refused by the store already
        configuration.create_judge_config(
            project=project, name="j", backend="openai_chat", model_id="m", params={"base_url": url}
        )
    with pytest.raises(ValueError, match="control characters"):
        endpoints.check_base_url(url)
    assert not JudgeConfig.objects.filter(project=project, name="j").exists()


def test_a_key_name_with_a_control_character_is_refused(project):
    with pytest.raises(DomainError, match="control characters"):
        configuration.create_judge_config(
            project=project,
            name="j",
            backend="openai_chat",
            model_id="m",
            params={"base_url": "http://127.0.0.1:9/v1", "api_key_env": "HV_JUDGE_KEY_A\n"},
        )


def test_a_key_with_a_line_break_is_never_sent(monkeypatch):
    monkeypatch.setenv("HV_JUDGE_API_KEY", "sk-abc\r\nX-Injected: 1")
    with pytest.raises(ValueError, match="control characters"):
        endpoints.api_key({})


def test_the_api_and_the_form_refuse_a_url_with_a_line_break(project, researcher, client):
    client.force_login(researcher)
    resp = client.post(
        reverse("api_judges", args=[project.id]),
        data=json.dumps(
            {"name": "k", "backend": "openai_chat", "model_id": "m", "params": {"base_url": "http://127.0.0.1:9/v1\n"}}
        ),
        content_type="application/json",
    )
    assert resp.status_code == 400 and "control characters" in resp.content.decode()
    page = client.post(
        reverse("judges", args=[project.id]),
        {
            "name": "f",
            "backend": "openai_chat",
            "model_id": "m",
            "parser": "",
            "questions": "",
            "passes": 1,
            "combine": "majority",
            "params": json.dumps({"base_url": "http://127.0.0.1:9/v1\r\n"}),
        },
    )
    assert page.status_code == 400 and "control characters" in page.content.decode()
    assert not JudgeConfig.objects.filter(project=project, name__in=["k", "f"]).exists()
