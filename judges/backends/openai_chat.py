"""OpenAI-compatible chat-completions backend (vLLM, TGI, llama.cpp server, Ollama, hosted APIs).

- images go as base64 ``data:`` URLs in ``image_url`` content parts, each named image preceded
  by a text part with its label ("Image A:"; ``ChatRequest.image_labels``);
- JSON answers are constrained with ``response_format: json_schema`` where the server
  supports it (``params.response_format``: ``json_schema`` (default for the JSON parser),
  ``json_object`` or ``none``); a request the server refuses with HTTP 400 is asked again
  without it (that request only: one bad request never turns it off for the others);
- at most ``params.concurrency`` requests in flight (default 4);
- 429, 5xx, timeouts and dropped connections are retried with exponential backoff and jitter
  (``Retry-After`` honoured up to ``max_backoff_s``), at most ``max_retries`` times;
- ``timeout_s`` per request;
- those four and ``concurrency`` have upper bounds (``judges.params``, ``MAX_*``; issue 37, M4),
  checked when the judge is created and again here, for rows written before;
- a cancelled run stops the retry loop at once: a back-off sleep waits on the backend's
  ``cancelled`` event (set by the chunk's watch, ``judges/execution.py``), and no new attempt
  starts once it is set; a request already in flight ends by its ``timeout_s``;
- a reply without an answer records no latency: the time to give up would tell a silent port
  (a timeout) from a refused one (issue 37);
- the API key comes from the environment variable ``params.api_key_env`` names (default
  ``HV_JUDGE_API_KEY``), one the administrator allows (``judges.endpoints``), never from the
  database or a Django setting;
- an endpoint's error answer is kept as its status code and standard reason only, never its body;
- the reply's ``usage.prompt_tokens`` / ``completion_tokens`` are kept (vLLM, TGI, llama.cpp and
  hosted APIs report them) to price the run; a reply without them has no count, never a guess.

``params.base_url`` (e.g. ``http://gpu-box:8000/v1``) defaults to ``HV_JUDGE_API_BASE``; any other
host must be allowed by ``HV_JUDGE_ALLOWED_HOSTS`` (checked here again, at run time)."""

from __future__ import annotations

import base64
import mimetypes
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from django.utils.translation import gettext_lazy

from .. import endpoints
from .. import params as judge_params
from .base import PROMPTED, BackendEntry, BackendUnavailable, ChatReply, ChatRequest, GenerativeBackend, Usage

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
# the parameters of the retry loop whose bounds the worker checks again (issue 37, M4)
LOOP_PARAMS = frozenset({"timeout_s", "max_retries", "backoff_s", "max_backoff_s", "concurrency"})
CANCELLED = "the run was cancelled"
_CLIENTS: dict[tuple[str, float], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(base_url: str, timeout: float):
    """One HTTP client (connection pool) per worker process and endpoint."""
    import httpx

    key = (base_url, timeout)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = httpx.Client(
                base_url=base_url.rstrip("/") + "/",
                timeout=httpx.Timeout(timeout),
                limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
            )
    return client


UNREACHABLE = "the endpoint could not be reached or did not answer"


def data_url(path: Path) -> str:
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(Path(path).read_bytes()).decode('ascii')}"


class OpenAIChatBackend(GenerativeBackend):
    queue = "api"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        p = spec.params
        self.base_url = str(p.get("base_url") or endpoints.default_base_url())
        if not self.base_url:
            raise BackendUnavailable(
                "no endpoint for the OpenAI-compatible judge: set params.base_url or HV_JUDGE_API_BASE"
            )
        if not spec.model_id:
            raise BackendUnavailable("the OpenAI-compatible judge needs a model id")
        try:  # checked when the judge was created; again here, for rows written before
            endpoints.check_base_url(self.base_url)
            self.api_key = endpoints.api_key(p, self.base_url)  # only a key bound to this endpoint
        except ValueError as exc:
            raise BackendUnavailable(str(exc)) from None
        try:  # bounded when the judge was created; again here, for rows written before (issue 37, M4)
            judge_params.check([q for q in judge_params.OPENAI_CHAT if q.name in LOOP_PARAMS], p)
        except judge_params.ParamError as exc:
            raise BackendUnavailable(str(exc)) from None
        self.timeout = float(p.get("timeout_s", 60))
        self.max_retries = int(p.get("max_retries", 5))
        self.backoff = float(p.get("backoff_s", 1.0))
        self.max_backoff = float(p.get("max_backoff_s", 30.0))
        self.concurrency = max(1, int(p.get("concurrency", 4)))
        from ..prompts import template_kind

        # constrained output for JSON rubric answers and for label judges (App. D.1: structured JSON)
        default_rf = (
            "json_schema" if spec.parser == "json" or template_kind(spec.prompt_template) == "label" else "none"
        )
        self.response_format = str(p.get("response_format", default_rf))
        self.generation = {
            k: p[k]
            for k in ("temperature", "top_p", "max_tokens", "stop", "frequency_penalty", "presence_penalty")
            if k in p
        }

    # ------------------------------------------------------------------ protocol
    def payload(self, req: ChatRequest, *, constrained: bool = True) -> dict[str, Any]:
        content: Any = req.user
        if req.images:
            content = [{"type": "text", "text": req.user}]
            for label, img in req.labelled_images():
                if label:  # said right before its image, as the paper prompts do: "Image A: [IMAGE_A]"
                    content.append({"type": "text", "text": f"{label}:"})
                content.append({"type": "image_url", "image_url": {"url": data_url(img)}})
        messages = ([{"role": "system", "content": req.system}] if req.system else []) + [
            {"role": "user", "content": content}
        ]
        body: dict[str, Any] = {"model": self.spec.model_id, "messages": messages, **self.generation}
        if req.seed is not None:
            body["seed"] = req.seed
        if req.schema is not None and constrained:
            if self.response_format == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "rubric_answers", "schema": req.schema, "strict": True},
                }
            elif self.response_format == "json_object":
                body["response_format"] = {"type": "json_object"}
        return body

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(self.max_backoff, max(0.0, float(retry_after)))
            except ValueError:
                pass
        # exponential backoff with "full jitter" between 50% and 100% of the step
        step = min(self.max_backoff, self.backoff * (2**attempt))
        return step * (0.5 + random.random() / 2)

    def _one(self, req: ChatRequest) -> ChatReply:
        import httpx

        client = _client(self.base_url, self.timeout)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        started = time.perf_counter()
        last = ""
        constrained = True  # this request's structured output; dropped for it alone on HTTP 400
        for attempt in range(self.max_retries + 1):
            if self.cancelled.is_set():  # no new attempt for a cancelled run
                return ChatReply(None, CANCELLED)
            retry_after = None
            body = self.payload(req, constrained=constrained)
            try:
                resp = client.post("chat/completions", json=body, headers=headers)
            except httpx.TransportError:  # timeouts included
                # one message for a refused, reset or silent connection: no port open / closed
                # oracle (issue 23, finding 6)
                last = UNREACHABLE
            else:
                if resp.status_code == 400 and "response_format" in body:
                    constrained = False  # the server may not support constrained output: ask again without
                    continue
                if resp.status_code in RETRY_STATUS:
                    last = http_error(resp.status_code)
                    retry_after = resp.headers.get("retry-after")
                elif resp.status_code >= 400:
                    # the status and its standard reason only: an endpoint's body is never kept
                    return ChatReply(None, http_error(resp.status_code))
                else:
                    text, problem, usage = _content(resp)
                    if problem is None:
                        return ChatReply(text, "", _ms(started), usage)
                    last = problem  # a garbled body is treated as transient
            # the back-off waits on the cancel event, so a cancel ends it at once (issue 37, M4)
            if attempt < self.max_retries and self.cancelled.wait(self._delay(attempt, retry_after)):
                return ChatReply(None, CANCELLED)
        # no latency without an answer: the time to give up tells a silent port from a refused one
        return ChatReply(None, f"{last} (gave up after {self.max_retries + 1} attempts)")

    def generate(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:
        if len(requests) <= 1 or self.concurrency == 1:
            return [self._one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(self._one, requests))


def _content(resp) -> tuple[str | None, str | None, Usage | None]:
    try:
        body = resp.json()
        content = body["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None, "malformed reply: not an OpenAI chat completion", None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        return None, "malformed reply: message content is not text", None
    return content, None, reply_usage(body)


def reply_usage(body: Any) -> Usage | None:
    """``usage.prompt_tokens`` / ``completion_tokens`` of a chat completion; None when either is
    missing or not a whole number >= 0 (a server that does not count is never guessed for)."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**31 for n in counts):
        return None
    return Usage(counts[0], counts[1])


def http_error(status: int) -> str:
    """``HTTP 404 Not Found``: the status code and its standard reason phrase (not the server's)."""
    import httpx

    reason = httpx.codes.get_reason_phrase(status)
    return f"HTTP {status} {reason}".rstrip()


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


BACKEND = BackendEntry(
    key="openai_chat",
    label=gettext_lazy("OpenAI-compatible chat endpoint"),
    model_help=gettext_lazy("Model id: required, the model the endpoint serves (e.g. Qwen/Qwen2.5-VL-7B-Instruct)."),
    family=PROMPTED,
    runner=OpenAIChatBackend,
    params=judge_params.OPENAI_CHAT,
)
