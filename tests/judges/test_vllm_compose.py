"""The vLLM service of docker-compose.yml (issue 13, point 4): in the ``gpu`` profile, serving a
model folder under the judge's model id on an OpenAI-compatible endpoint, and that endpoint is
one the app's judge rules (judges/endpoints.py) let the API backend use with the compose
defaults; other ports of that host stay refused."""

import re
from pathlib import Path

import pytest
import yaml

from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from judges import endpoints
from judges.backends import JudgeSpec
from judges.registry import backend_for

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"
VAR = re.compile(r"\$\{(\w+)(:?-)([^}]*)\}")


def with_defaults(value: str, env: dict[str, str]) -> str:
    """Compose interpolation of ``${NAME:-default}`` / ``${NAME-default}`` under ``env``."""

    def one(m: re.Match) -> str:
        name, op, default = m.groups()
        if name not in env or (op == ":-" and env[name] == ""):
            return default
        return env[name]

    return VAR.sub(one, value)


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load(COMPOSE.read_text())


def test_the_vllm_service_serves_a_model_folder_in_the_gpu_profile(compose):
    vllm = compose["services"]["vllm"]
    assert vllm["profiles"] == ["gpu"]
    assert vllm["image"].startswith("${VLLM_IMAGE:-vllm/vllm-openai:v")
    args = [with_defaults(a, {"VLLM_MODEL": "qwen-judge"}) for a in vllm["command"]]
    assert "--model=/models/qwen-judge" in args and "--served-model-name=qwen-judge" in args
    assert "--port=8000" in args and "--host=0.0.0.0" in args
    assert [with_defaults(v, {}) for v in vllm["volumes"]] == ["./models:/models:ro"]
    assert vllm["environment"]["HF_HUB_OFFLINE"] == "1"
    assert "/health" in " ".join(vllm["healthcheck"]["test"])
    device = vllm["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["capabilities"] == ["gpu"] and with_defaults(device["device_ids"][0], {}) == "0"
    # without the gpu profile the stack is the CPU one: no GPU service starts
    default = sorted(n for n, s in compose["services"].items() if not s.get("profiles"))
    assert default == ["beat", "migrate", "postgres", "redis", "web", "worker"]


def test_the_app_services_may_call_the_vllm_endpoint_and_nothing_else_there(compose, settings):
    env = compose["x-app"]["environment"]
    for name in ("web", "worker", "gpu-worker-0"):  # they all inherit the app environment
        assert compose["services"][name]["environment"]["HV_JUDGE_ALLOWED_HOSTS"] == env["HV_JUDGE_ALLOWED_HOSTS"]
    settings.HV_JUDGE_ALLOWED_HOSTS = with_defaults(env["HV_JUDGE_ALLOWED_HOSTS"], {}).split(",")
    settings.HV_JUDGE_API_BASE = with_defaults(env["HV_JUDGE_API_BASE"], {})
    assert settings.HV_JUDGE_API_BASE == "http://vllm:8000/v1"
    endpoints.check_params("openai_chat", {"base_url": "http://vllm:8000/v1"})
    with pytest.raises(ValueError, match="not allowed"):
        endpoints.check_params("openai_chat", {"base_url": "http://vllm:9000/v1"})
    with pytest.raises(ValueError, match="not allowed"):
        endpoints.check_params("openai_chat", {"base_url": "http://other-host:8000/v1"})
    # a judge that names no endpoint uses the vLLM one
    p = get_preset("cultivate.faithfulness")
    spec = JudgeSpec(
        backend="openai_chat",
        model_id="qwen-judge",
        prompt_template={"system": "", "user": "{prompt}"},
        parser="score_is",
        questions=("faith",),
        params={},
        rubric=Rubric.from_schema(p.rubric),
        item_fields=p.item_fields,
        preset_key=p.key,
    )
    assert backend_for(spec).base_url == "http://vllm:8000/v1"
    # an administrator who sets HV_JUDGE_API_BASE to empty turns the default endpoint off
    assert with_defaults(env["HV_JUDGE_API_BASE"], {"HV_JUDGE_API_BASE": ""}) == ""
