"""Issue 12, findings 1, 2 and 11: a judge's key and endpoint are the administrator's to allow.

- ``params.api_key_env`` names an environment variable from ``HV_JUDGE_API_KEYS`` (never a
  Django setting such as ``SECRET_KEY`` or ``DATABASES``), checked at creation and by the worker;
- ``params.base_url`` names a host from ``HV_JUDGE_ALLOWED_HOSTS`` (default loopback) or the
  default endpoint ``HV_JUDGE_API_BASE``;
- literal keys in the parameters are refused, and one stored before is never echoed;
- an endpoint's error body is never kept, only its status; a 400 that refuses structured output
  turns it off for that request only."""

import json

import pytest
from django.urls import reverse

from core.errors import DomainError
from judges import configuration, endpoints, execution, runs
from judges.backends import ChatRequest
from judges.models import JudgeConfig, JudgeOutput, JudgeRun
from judges.registry import backend_for

from .chat_server import ChatServer
from .helpers import project_with_demo
from .test_openai_backend import faith_item, spec

pytestmark = pytest.mark.django_db
FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 1}


@pytest.fixture
def project(researcher, tmp_path):
    return project_with_demo("cultivate.faithfulness", researcher, tmp_path)


def run_all(config, django_capture_on_commit_callbacks) -> JudgeRun:
    with django_capture_on_commit_callbacks(execute=False):
        run = runs.start_judge_run(config=config)
    execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids)
    run.refresh_from_db()
    return run


def create(project, name="j", **params):
    return configuration.create_judge_config(
        project=project, name=name, backend="openai_chat", model_id="m", params={**FAST, **params}
    )


# ------------------------------------------------------------------------------ keys (1)
@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASES", "PATH", "HV_CROWD_PID_KEY", "DATABASE_URL"])
def test_a_judge_cannot_name_a_setting_or_any_variable_as_its_key(project, name):
    with pytest.raises(DomainError) as exc:
        create(project, base_url="http://127.0.0.1:9/v1", api_key_env=name)
    assert "not allowed" in str(exc.value) and "HV_JUDGE_KEY_*" in str(exc.value)
    assert not JudgeConfig.objects.exists()


def test_the_platforms_secrets_are_refused_even_when_the_allow_list_names_them(project, settings):
    settings.HV_JUDGE_API_KEYS = ["SECRET_KEY", "*"]
    with pytest.raises(DomainError, match="not allowed"):
        create(project, base_url="http://127.0.0.1:9/v1", api_key_env="SECRET_KEY")


def test_the_worker_refuses_a_stored_setting_name_and_sends_nothing(
    project, settings, django_capture_on_commit_callbacks
):
    """Defence in depth: a row written before the check (or by hand) cannot send SECRET_KEY."""
    settings.SECRET_KEY = "the-django-secret"
    with ChatServer() as server:
        config = create(project, base_url=server.base_url)
        JudgeConfig.objects.filter(pk=config.pk).update(
            params={**config.params, "api_key_env": "SECRET_KEY", "base_url": server.base_url}
        )
        run = run_all(JudgeConfig.objects.get(pk=config.pk), django_capture_on_commit_callbacks)
    assert run.status == "failed" and "api_key_env 'SECRET_KEY' is not allowed" in run.message
    assert server.requests == []


def test_an_allowed_key_comes_from_the_environment_only(project, settings, monkeypatch):
    monkeypatch.setenv("HV_JUDGE_KEY_LAB", "sk-lab")
    with ChatServer() as server:
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, api_key_env="HV_JUDGE_KEY_LAB"))
        backend.generate([ChatRequest(system="", user="score is?", images=[])])
        # a Django setting of an allowed name is not read: only os.environ
        settings.HV_JUDGE_KEY_OTHER = "from-settings"
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, api_key_env="HV_JUDGE_KEY_OTHER"))
        backend.generate([ChatRequest(system="", user="score is?", images=[])])
    assert server.requests[0]["auth"] == "Bearer sk-lab"
    assert server.requests[1]["auth"] is None
    assert create(project, base_url="http://127.0.0.1:9/v1", api_key_env="HV_JUDGE_KEY_LAB")


# ------------------------------------------------------------------------------ literal keys (11)
@pytest.mark.parametrize(
    "params, named",
    [
        ({"api_key": "sk-live-123"}, "api_key"),
        ({"apiKey": "sk-live-123"}, "apiKey"),
        ({"access_token": "t"}, "access_token"),
        ({"client_secret": "s"}, "client_secret"),
        ({"password": "p"}, "password"),
        ({"headers": {"Authorization": "Bearer sk-live-123"}}, "headers.Authorization"),
    ],
)
def test_literal_keys_in_params_are_refused(project, params, named):
    with pytest.raises(DomainError) as exc:
        create(project, base_url="http://127.0.0.1:9/v1", **params)
    assert named in str(exc.value) and "api_key_env" in str(exc.value)
    assert not JudgeConfig.objects.exists()


def test_generation_params_that_merely_mention_tokens_are_fine(project):
    config = create(project, base_url="http://127.0.0.1:9/v1", max_tokens=64, api_key_env="HV_JUDGE_API_KEY")
    assert config.params["max_tokens"] == 64


def test_a_key_stored_before_the_check_is_never_echoed(project, researcher, client):
    config = create(project, base_url="http://127.0.0.1:9/v1")
    legacy = {**config.params, "api_key": "sk-live-LEAK", "headers": {"X-Api-Key": "sk-live-LEAK"}}
    JudgeConfig.objects.filter(pk=config.pk).update(params=legacy)
    client.force_login(researcher)
    resp = client.get(reverse("api_judges", args=[project.id]))
    assert resp.status_code == 200
    assert "sk-live-LEAK" not in resp.content.decode()
    [row] = resp.json()
    assert row["params"]["api_key"] == endpoints.REDACTED and row["params"]["base_url"] == "http://127.0.0.1:9/v1"
    assert "sk-live-LEAK" not in client.get(reverse("judges", args=[project.id])).content.decode()
    assert endpoints.public_params({"token": "x", "n": [{"secret": "y"}]}) == {
        "token": endpoints.REDACTED,
        "n": [{"secret": endpoints.REDACTED}],
    }


def test_the_api_refuses_a_literal_key_with_a_clear_400(project, researcher, client):
    client.force_login(researcher)
    resp = client.post(
        reverse("api_judges", args=[project.id]),
        data=json.dumps(
            {
                "name": "k",
                "backend": "openai_chat",
                "model_id": "m",
                "params": {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-live-LEAK"},
            }
        ),
        content_type="application/json",
    )
    assert resp.status_code == 400 and "api_key" in resp.json()["detail"]
    assert "sk-live-LEAK" not in resp.content.decode()


# ------------------------------------------------------------------------------ endpoints (2)
@pytest.mark.parametrize(
    "url, why",
    [
        ("http://10.0.0.5:6379/", "not allowed"),
        ("http://metadata.google.internal/v1", "not allowed"),
        ("http://169.254.169.254/latest", "not allowed"),
        ("http://2130706433/v1", "not allowed"),  # 127.0.0.1 in disguise: names are compared, not guessed
        ("file:///etc/passwd", "http:// or https://"),
        ("http://user:pw@127.0.0.1/v1", "credentials"),
        ("http://127.0.0.1/v1?api_key=sk", "query"),
    ],
)
def test_a_judge_endpoint_outside_the_allow_list_is_refused(project, url, why):
    with pytest.raises(DomainError, match=why):
        create(project, base_url=url)


def test_the_allow_list_and_the_default_endpoint_are_the_administrators(project, settings):
    settings.HV_JUDGE_ALLOWED_HOSTS = ["gpu-box:8000", ".models.example.org"]
    settings.HV_JUDGE_API_BASE = "https://api.example.com/v1"
    assert create(project, "a", base_url="http://gpu-box:8000/v1")
    assert create(project, "b", base_url="https://vllm.models.example.org/v1")
    assert create(project, "c", base_url="https://api.example.com/v1")
    with pytest.raises(DomainError, match=r"gpu-box:8000, \.models\.example\.org"):
        create(project, "d", base_url="http://gpu-box:8001/v1")
    with pytest.raises(DomainError, match="not allowed"):
        create(project, "e", base_url="http://127.0.0.1:8000/v1")  # loopback is only the default


def test_the_worker_refuses_a_stored_endpoint_outside_the_allow_list(
    project, settings, django_capture_on_commit_callbacks
):
    with ChatServer() as server:
        config = create(project, base_url=server.base_url)
        settings.HV_JUDGE_ALLOWED_HOSTS = ["gpu-box"]  # the administrator narrowed the list since
        run = run_all(config, django_capture_on_commit_callbacks)
    assert run.status == "failed" and "not allowed" in run.message
    assert server.requests == []


def test_an_endpoints_error_body_is_never_kept(project, tmp_path, django_capture_on_commit_callbacks):
    body = '{"error": "INTERNAL-SERVICE-SECRET: redis version 7, keys: session:abc"}'
    with ChatServer() as server:
        server.script.extend([("error", (403, body))] * 500)
        config = create(project, base_url=server.base_url)
        run = run_all(config, django_capture_on_commit_callbacks)
        server.script.clear()
        server.script.extend([("error", (403, body))] * 3)
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, max_retries=0))
        [v] = backend.judge([faith_item(tmp_path)], [0])
        server.script.clear()
        server.script.extend([("body", "<html>INTERNAL-ADMIN-PAGE</html>")] * 5)
        [m] = backend.judge([faith_item(tmp_path)], [0])
    assert "HTTP 403 Forbidden" in v.error and "SECRET" not in v.error
    assert "malformed reply" in m.error and "INTERNAL" not in m.error + m.raw
    errors = " ".join(JudgeOutput.objects.filter(run=run).values_list("error", flat=True))
    assert "HTTP 403 Forbidden" in errors and "SECRET" not in errors
    assert "SECRET" not in run.message


def test_a_refused_response_format_is_dropped_for_that_request_only():
    """A 400 on one request (a server that refuses constrained output, or one bad prompt) retries
    that request without it; the next request asks for structured output again."""
    schema = {"type": "object", "properties": {"q": {"type": "integer", "enum": [0, 1]}}, "required": ["q"]}
    with ChatServer() as server:
        server.script.append(("refuse_rf", None))
        backend = backend_for(spec("valueground.pair_quality", server.base_url, concurrency=1))
        replies = backend.generate([ChatRequest(system="", user="a", images=[], schema=schema) for _ in range(2)])
    assert all(r.error == "" for r in replies)
    sent = [("response_format" in r["body"]) for r in server.requests]
    assert sent == [True, False, True]


# ------------------------------------------------------------------------------ issue 23, finding 6
def test_allowed_hosts_name_the_port_and_a_bare_host_means_the_default_port(project, settings):
    settings.HV_JUDGE_API_BASE = ""
    settings.HV_JUDGE_ALLOWED_HOSTS = ["127.0.0.1:8000", "gpu-box", "[::1]:8001", "lab:*"]
    assert create(project, "a", base_url="http://127.0.0.1:8000/v1")
    assert create(project, "b", base_url="http://gpu-box/v1")  # no port named: http's 80
    assert create(project, "c", base_url="https://gpu-box/v1")  # https's 443
    assert create(project, "d", base_url="http://[::1]:8001/v1")
    assert create(project, "e", base_url="http://lab:6006/v1")  # the administrator's explicit any port
    for url in ["http://127.0.0.1:6379/", "http://127.0.0.1:22/", "http://gpu-box:8000/v1", "http://[::1]:8000/v1"]:
        with pytest.raises(DomainError, match="not allowed"):
            create(project, "x", base_url=url)


def test_the_default_allow_list_is_the_local_vllm_port_only(project, settings):
    from django.test import override_settings

    with override_settings():
        del settings.HV_JUDGE_ALLOWED_HOSTS  # the platform's default
        settings.HV_JUDGE_API_BASE = ""
        assert endpoints.allowed_hosts() == ["127.0.0.1:8000", "localhost:8000", "[::1]:8000"]
        endpoints.check_base_url("http://127.0.0.1:8000/v1")
        for port in (22, 5432, 6379, 9):
            with pytest.raises(ValueError, match="not allowed"):
                endpoints.check_base_url(f"http://127.0.0.1:{port}/")


def test_connection_errors_tell_no_port_state(tmp_path):
    """A closed port (refused) and a silent one (timeout) read the same: no port oracle."""
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens: connection refused
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)  # accepts the connection, never answers: a timeout
    try:
        errors = []
        for port in (closed_port, silent.getsockname()[1]):
            backend = backend_for(
                spec("cultivate.faithfulness", f"http://127.0.0.1:{port}/v1", max_retries=0, timeout_s=0.5)
            )
            [v] = backend.judge([faith_item(tmp_path)], [0])
            errors.append(v.error)
    finally:
        silent.close()
    assert errors[0] == errors[1]
    assert "refused" not in errors[0].lower() and "timed out" not in errors[0].lower()
    assert str(closed_port) not in errors[0]


def test_each_key_is_bound_to_its_endpoints(project, settings, monkeypatch, django_capture_on_commit_callbacks):
    settings.HV_JUDGE_API_BASE = "https://api.example.com/v1"
    settings.HV_JUDGE_ALLOWED_HOSTS = ["127.0.0.1:*", "gpu-box:8000"]
    settings.HV_JUDGE_API_KEYS = ["HV_JUDGE_API_KEY", "HV_JUDGE_KEY_LAB@gpu-box:8000", "HV_JUDGE_KEY_LAB@127.0.0.1:*"]
    monkeypatch.setenv("HV_JUDGE_API_KEY", "sk-admin-default")
    monkeypatch.setenv("HV_JUDGE_KEY_LAB", "sk-lab")
    # the lab key goes to its endpoints; the admin's default key only to the default endpoint
    assert create(project, "a", base_url="http://gpu-box:8000/v1", api_key_env="HV_JUDGE_KEY_LAB")
    assert create(project, "b", base_url="https://api.example.com/v1", api_key_env="HV_JUDGE_API_KEY")
    with pytest.raises(DomainError, match="may not be sent to this endpoint"):
        create(project, "c", base_url="http://gpu-box:8000/v1", api_key_env="HV_JUDGE_API_KEY")
    assert not JudgeConfig.objects.filter(name="c").exists()
    with ChatServer() as server:
        # a judge naming no key: the default key is not sent where it is not bound
        config = create(project, "d", base_url=server.base_url)
        backend = backend_for(spec("cultivate.faithfulness", server.base_url))
        backend.generate([ChatRequest(system="", user="score is?", images=[])])
        assert server.requests[-1]["auth"] is None
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, api_key_env="HV_JUDGE_KEY_LAB"))
        backend.generate([ChatRequest(system="", user="score is?", images=[])])
        assert server.requests[-1]["auth"] == "Bearer sk-lab"
        # a row naming an unbound key (written before the check, or by hand) fails at run time
        JudgeConfig.objects.filter(pk=config.pk).update(params={**config.params, "api_key_env": "HV_JUDGE_API_KEY"})
        sent = len(server.requests)
        run = run_all(JudgeConfig.objects.get(pk=config.pk), django_capture_on_commit_callbacks)
    assert run.status == "failed" and "may not be sent to this endpoint" in run.message
    assert len(server.requests) == sent and "sk-admin-default" not in run.message
