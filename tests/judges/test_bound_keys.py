"""Issue 37, M7 and the judge lows: a bound key goes only to its host:port.

- M7: a key bound to ``NAME@127.0.0.1:8290`` was still sent to the default endpoint
  (``HV_JUDGE_API_BASE``), on any path, and so was a key matched by a prefix and bound nowhere;
- a silent port and a refused one must not differ in ``latency_ms`` (3,009 ms against a few);
- bidi controls (U+202E) and other invisible characters are refused in judge URLs and key names."""

from __future__ import annotations

import socket

import pytest

from core.errors import DomainError
from judges import configuration, endpoints, execution, runs
from judges.backends import BackendUnavailable, ChatRequest
from judges.models import JudgeConfig, JudgeRun
from judges.registry import backend_for

from .chat_server import ChatServer
from .helpers import project_with_demo
from .test_openai_backend import faith_item, spec

pytestmark = pytest.mark.django_db
FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 1}


@pytest.fixture
def project(researcher, tmp_path):
    return project_with_demo("cultivate.faithfulness", researcher, tmp_path)


def create(project, name="j", **params):
    return configuration.create_judge_config(
        project=project, name=name, backend="openai_chat", model_id="m", params={**FAST, **params}
    )


def run_all(config, django_capture_on_commit_callbacks) -> JudgeRun:
    with django_capture_on_commit_callbacks(execute=False):
        run = runs.start_judge_run(config=config)
    execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids)
    run.refresh_from_db()
    return run


def ask(base_url: str, **params) -> None:
    backend_for(spec("cultivate.faithfulness", base_url, **params)).generate(
        [ChatRequest(system="", user="score is?", images=[])]
    )


@pytest.fixture
def default_endpoint(settings, monkeypatch):
    """The finding's set-up: the default endpoint is a server on loopback; the lab key is bound
    to 127.0.0.1:8290 only, and every HV_JUDGE_KEY_* name is allowed (the default prefix)."""
    with ChatServer() as server:
        settings.HV_JUDGE_API_BASE = server.base_url
        settings.HV_JUDGE_ALLOWED_HOSTS = ["127.0.0.1:*"]
        settings.HV_JUDGE_API_KEYS = ["HV_JUDGE_API_KEY", "HV_JUDGE_KEY_LAB@127.0.0.1:8290", "HV_JUDGE_KEY_*"]
        monkeypatch.setenv("HV_JUDGE_API_KEY", "sk-admin-default")
        monkeypatch.setenv("HV_JUDGE_KEY_LAB", "sk-lab-8290")
        monkeypatch.setenv("HV_JUDGE_KEY_STRAY", "sk-stray")
        yield server


# ------------------------------------------------------------------------------ M7
@pytest.mark.parametrize("key", ["HV_JUDGE_KEY_LAB", "HV_JUDGE_KEY_STRAY"])
def test_a_key_bound_elsewhere_or_nowhere_never_goes_to_the_default_endpoint(project, default_endpoint, key):
    server = default_endpoint
    port = server.httpd.server_address[1]
    for base_url in (None, server.base_url, f"http://127.0.0.1:{port}/other/path/v1"):  # any path
        with pytest.raises(DomainError, match="may not be sent to this endpoint"):
            create(project, **({"base_url": base_url} if base_url else {}), api_key_env=key)
        with pytest.raises(BackendUnavailable, match="may not be sent to this endpoint"):
            ask(base_url or server.base_url, api_key_env=key)
    assert not JudgeConfig.objects.exists()
    assert server.requests == []


def test_a_stored_judge_sending_a_bound_key_to_the_default_endpoint_fails_and_sends_nothing(
    project, default_endpoint, django_capture_on_commit_callbacks
):
    server = default_endpoint
    config = create(project, base_url=server.base_url)
    JudgeConfig.objects.filter(pk=config.pk).update(params={**config.params, "api_key_env": "HV_JUDGE_KEY_LAB"})
    run = run_all(JudgeConfig.objects.get(pk=config.pk), django_capture_on_commit_callbacks)
    assert run.status == "failed" and "bound to 127.0.0.1:8290" in run.message
    assert server.requests == [] and "sk-lab" not in run.message


def test_a_key_goes_where_it_is_bound_and_the_listed_name_to_the_default_endpoint(project, default_endpoint, settings):
    server = default_endpoint
    ask(server.base_url, api_key_env="HV_JUDGE_API_KEY")  # listed by its name: the default endpoint
    ask(server.base_url)  # naming none: the default key, where it may go
    assert [r["auth"] for r in server.requests] == ["Bearer sk-admin-default"] * 2
    with ChatServer() as lab:
        settings.HV_JUDGE_API_KEYS = [
            *settings.HV_JUDGE_API_KEYS,
            f"HV_JUDGE_KEY_LAB@127.0.0.1:{lab.httpd.server_address[1]}",
        ]
        assert create(project, base_url=lab.base_url, api_key_env="HV_JUDGE_KEY_LAB")
        ask(lab.base_url, api_key_env="HV_JUDGE_KEY_LAB")
        ask(lab.base_url)  # the default key is bound to the default endpoint only: not sent here
    assert [r["auth"] for r in lab.requests] == ["Bearer sk-lab-8290", None]
    # a prefix bound to an endpoint binds every key of it there
    settings.HV_JUDGE_API_KEYS = ["HV_JUDGE_KEY_*@127.0.0.1:8290"]
    assert endpoints.key_bound_to("HV_JUDGE_KEY_STRAY", "http://127.0.0.1:8290/v1")
    assert not endpoints.key_bound_to("HV_JUDGE_KEY_STRAY", server.base_url)


def test_the_default_endpoint_takes_a_key_only_on_its_own_scheme(settings):
    settings.HV_JUDGE_API_BASE = "https://api.example.com:443/v1"
    settings.HV_JUDGE_API_KEYS = ["HV_JUDGE_API_KEY"]
    assert endpoints.key_bound_to("HV_JUDGE_API_KEY", "https://api.example.com/v1")
    assert not endpoints.key_bound_to("HV_JUDGE_API_KEY", "http://api.example.com:443/v1")  # in clear


# ------------------------------------------------------------------------------ lows
def test_a_silent_port_and_a_refused_one_record_the_same_latency(tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens: refused at once
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)  # never answers: the request times out after 0.5 s
    try:
        verdicts = [
            backend_for(
                spec("cultivate.faithfulness", f"http://127.0.0.1:{port}/v1", max_retries=0, timeout_s=0.5)
            ).judge([faith_item(tmp_path)], [0])[0]
            for port in (closed_port, silent.getsockname()[1])
        ]
    finally:
        silent.close()
    assert [v.latency_ms for v in verdicts] == [None, None]
    assert verdicts[0].error == verdicts[1].error


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1/\u202egnp.exe",  # RIGHT-TO-LEFT OVERRIDE: reads as another path
        "http://127.0.0.1:8000/\u2066v1\u2069",  # isolates
        "http://127.0.0.1:8000/v1\u200b",  # a zero-width space
        "http://127.0.0.1:8000/v1\ufeff",  # the BOM
    ],
)
def test_invisible_characters_are_refused_in_a_judge_url(project, url):
    with pytest.raises(DomainError, match="invisible characters"):
        create(project, base_url=url)
    assert not JudgeConfig.objects.exists()


def test_a_bidi_override_is_refused_in_a_key_name(project):
    with pytest.raises(DomainError, match="invisible characters"):
        create(project, base_url="http://127.0.0.1:8000/v1", api_key_env="HV_JUDGE_KEY_\u202eBAL")
    assert not JudgeConfig.objects.exists()
