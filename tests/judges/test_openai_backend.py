"""The OpenAI-compatible backend against a chat-completions server on loopback: retries with
backoff on 429 / 500 / timeouts, malformed replies, images as data URLs, JSON-schema output
with a fallback, and the concurrency limit."""

import base64

from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from judges.backends import ChatRequest, JudgeItem, JudgeSpec
from judges.prompts import preset_defaults
from judges.registry import backend_for

from .chat_server import ChatServer

FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 4}


def spec(preset: str, base_url: str, **params) -> JudgeSpec:
    p = get_preset(preset)
    rubric = Rubric.from_schema(p.rubric)
    d = preset_defaults(p, rubric)
    return JudgeSpec(
        backend="openai_chat",
        model_id="judge-model",
        prompt_template=d["prompt_template"],
        parser=d["parser"],
        questions=tuple(d["questions"]),
        params={"base_url": base_url, **FAST, **params},
        rubric=rubric,
        item_fields=p.item_fields,
        preset_key=preset,
    )


def faith_item(tmp_path, item_id=1):
    img = tmp_path / "img.png"
    from tests.annotation.factories import png_bytes

    img.write_bytes(png_bytes())
    ctx = {
        "activity": "eating at home",
        "country": "Iran",
        "prompt": "A photorealistic photo of eating at home in Iran.",
    }
    return JudgeItem(item_id=item_id, context=ctx, images={"image": img})


def test_cultivate_paper_prompts_score_each_question_with_retries(tmp_path):
    with ChatServer(score=4) as server:
        server.script.extend([("status", 429), ("status", 500), ("status", 503)])
        backend = backend_for(spec("cultivate.faithfulness", server.base_url))
        [v] = backend.judge([faith_item(tmp_path)], [0])
    assert v.error == "" and v.answers == {"faith": 4, "hal": 4, "exag": 4}
    # 3 questions (ALIGN, HAL, EXAG prompts of Tables 29-31) + 3 retried failures
    assert len(server.requests) == 6
    body = server.requests[-1]["body"]
    system = body["messages"][0]["content"]
    assert "COUNTRY: Iran" in system and "PROMPT: A photorealistic photo of eating at home in Iran." in system
    image_part = body["messages"][1]["content"][1]
    assert image_part["type"] == "image_url"
    assert image_part["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(image_part["image_url"]["url"].split(",", 1)[1]).startswith(b"\x89PNG")
    assert "response_format" not in body  # score-is prompts are free text


def test_timeouts_are_retried_and_then_the_answer_is_used(tmp_path):
    with ChatServer() as server:
        server.script.append(("sleep", 1.5))
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, timeout_s=0.5))
        [v] = backend.judge([faith_item(tmp_path)], [0])
    assert v.error == "" and v.answers["faith"] == 4


def test_a_server_that_keeps_failing_gives_a_clear_error_not_a_score(tmp_path):
    with ChatServer() as server:
        server.script.extend([("body", "<html>bad gateway</html>")] * 10)
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, max_retries=2))
        [v] = backend.judge([faith_item(tmp_path)], [0])
    assert v.answers is None
    assert "malformed reply" in v.error and "gave up after 3 attempts" in v.error


def test_a_reply_outside_the_contract_is_a_parse_failure_with_the_raw_text_kept(tmp_path):
    with ChatServer() as server:
        server.script.append(("content", "It looks mostly accurate, I'd say 4/5."))
        backend = backend_for(spec("cultivate.faithfulness", server.base_url))
        [v] = backend.judge([faith_item(tmp_path)], [0])
    assert v.answers is None and v.error.startswith("parse failed")
    assert "I'd say 4/5" in v.raw


def test_json_schema_output_and_fallback_when_the_server_refuses_it(tmp_path):
    from tests.annotation.factories import png_bytes

    (tmp_path / "a.png").write_bytes(png_bytes())
    (tmp_path / "b.png").write_bytes(png_bytes((0, 0, 200)))
    item = JudgeItem(
        1,
        {"question": "Family?", "option_a": "Very", "option_b": "Not at all"},
        {"image_a": tmp_path / "a.png", "image_b": tmp_path / "b.png"},
    )
    with ChatServer() as server:
        backend = backend_for(spec("valueground.pair_quality", server.base_url))
        [v] = backend.judge([item], [0])
        rf = server.requests[0]["body"]["response_format"]
        assert rf["type"] == "json_schema"
        assert set(rf["json_schema"]["schema"]["properties"]) == {"q1", "q2", "q3", "q4"}
        content = server.requests[0]["body"]["messages"][1]["content"]
        # text, then each image after its label as the rubric names it ("Image A:", "Image B:")
        assert [p["type"] for p in content] == ["text", "text", "image_url", "text", "image_url"]
        assert (content[1]["text"], content[3]["text"]) == ("Image A:", "Image B:")
    assert v.answers == {"q1": 2, "q2": 2, "q3": 2, "q4": 1}
    with ChatServer() as server:
        server.script.append(("refuse_rf", None))
        backend = backend_for(spec("valueground.pair_quality", server.base_url))
        [v] = backend.judge([item], [0])
        assert "response_format" not in server.requests[1]["body"]
    assert v.error.startswith("parse failed")  # this server then answers free text: not faked into a score


def test_at_most_concurrency_requests_are_in_flight():
    with ChatServer(delay_s=0.1) as server:
        backend = backend_for(spec("cultivate.faithfulness", server.base_url, concurrency=3))
        replies = backend.generate([ChatRequest(system="", user="score is?", images=[]) for _ in range(12)])
    assert all(r.text == "score is 4" for r in replies)
    assert server.max_in_flight == 3


def test_api_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("HV_JUDGE_API_KEY", "sk-test")
    with ChatServer() as server:
        backend = backend_for(spec("cultivate.faithfulness", server.base_url))
        backend.generate([ChatRequest(system="", user="score is?", images=[])])
    assert server.requests[0]["auth"] == "Bearer sk-test"
    assert get_preset("cqbench.story").judge_prompt is not None


def test_one_http_400_turns_off_structured_output_for_that_request_only():
    """Issue 12: an HTTP 400 once (e.g. one oversized request) must not turn structured output off
    for the backend for good: that request is asked again once without ``response_format``, the
    next requests (same backend, and a fresh backend of the same endpoint) still send it."""
    with ChatServer() as server:
        server.script.append(("status", 400))  # answers 400 once, whatever was sent
        s = spec("valueground.pair_quality", server.base_url, concurrency=1)
        backend = backend_for(s)
        replies = backend.generate([ChatRequest(system="", user="q", images=[], schema={"type": "object"})] * 3)
        sent = [r["body"].get("response_format", {}).get("type") for r in server.requests]
        assert sent == ["json_schema", None, "json_schema", "json_schema"]
        assert all(r.error == "" for r in replies)
        backend_for(s).generate([ChatRequest(system="", user="q", images=[], schema={"type": "object"})])
        assert server.requests[-1]["body"]["response_format"]["type"] == "json_schema"


def test_a_server_that_always_answers_400_is_asked_twice_then_the_request_fails():
    with ChatServer() as server:
        for _ in range(10):
            server.script.append(("status", 400))
        backend = backend_for(spec("valueground.pair_quality", server.base_url))
        [reply] = backend.generate([ChatRequest(system="", user="q", images=[], schema={"type": "object"})])
        assert reply.text is None and reply.error == "HTTP 400 Bad Request"
        assert ["response_format" in r["body"] for r in server.requests] == [True, False]
