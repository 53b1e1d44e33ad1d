"""A small OpenAI-compatible chat-completions server on loopback for the judge tests.

It answers like a (very simple) judge would: a "score is <num>" prompt gets ``score is N``;
a request with a JSON-schema ``response_format`` gets the first allowed value of every
property. Scripted faults are consumed first, in order: ``("status", 429)``, ``("status", 500)``,
``("sleep", seconds)`` (then a normal answer), ``("body", "not json")``, ``("error", (403, "body"))``, ``("content", "text")``,
``("refuse_rf", None)`` (HTTP 400 when response_format is present). ``responder(body)``, when
given, answers first (its text is the reply's content; None falls back to the rules above): a
test's stand-in for a classifier that answers from the image and prompt it was sent."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _answer_for_schema(schema: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, prop in schema.get("properties", {}).items():
        if prop.get("type") == "array" and "minItems" in prop:
            inner = prop["items"]
            out[key] = [_first(inner)] * prop["minItems"]
        else:
            out[key] = _first(prop)
    return out


def _first(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][-1]
    if prop.get("type") == "array":
        return []
    return "ok"


class ChatServer:
    def __init__(
        self,
        *,
        score: int = 4,
        delay_s: float = 0.0,
        responder: Callable[[dict[str, Any]], str | None] | None = None,
        usage: bool = True,
    ) -> None:
        self.responder = responder
        self.usage = usage  # report token counts as real servers do (words of the request and reply)
        self.script: deque = deque()
        self.requests: list[dict[str, Any]] = []
        self.score = score
        self.delay_s = delay_s
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("authorization")})
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    step = server.script.popleft() if server.script else None
                self.counted = True
                try:
                    server._handle(self, body, step)
                finally:
                    server._done(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ replies
    def _done(self, h) -> None:
        # A request stops counting as in flight before its answer is written: once the client
        # has read it, it may send its next request, and that one must not meet a stale count.
        with self.lock:
            if getattr(h, "counted", False):
                self.in_flight -= 1
                h.counted = False

    def _send(self, h, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self._done(h)
        try:
            h.send_response(status)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", str(len(payload)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def _handle(self, h, body: dict[str, Any], step) -> None:
        if not h.path.endswith("/chat/completions"):
            self._send(h, 404, b'{"error": "not found"}')
            return
        content = None
        if step is not None:
            kind, arg = step
            if kind == "status":
                self._send(h, arg, b'{"error": {"message": "scripted"}}', {"retry-after": "0"} if arg == 429 else None)
                return
            if kind == "body":
                self._send(h, 200, arg.encode())
                return
            if kind == "error":  # (status, body text)
                self._send(h, arg[0], arg[1].encode())
                return
            if kind == "sleep":
                time.sleep(arg)
            if kind == "content":
                content = arg
            if kind == "refuse_rf" and "response_format" in body:
                self._send(h, 400, b'{"error": {"message": "response_format is not supported"}}')
                return
        if self.delay_s:
            time.sleep(self.delay_s)
        if content is None and self.responder is not None:
            content = self.responder(body)
        if content is None:
            rf = body.get("response_format") or {}
            if rf.get("type") == "json_schema":
                content = json.dumps(_answer_for_schema(rf["json_schema"]["schema"]))
            else:
                text = json.dumps(body.get("messages", []))
                content = f"score is {self.score}" if "score is" in text else '{"verdict": "G"}'
        reply = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
        if self.usage:
            reply["usage"] = usage_of(body, content)
        self._send(h, 200, json.dumps(reply).encode())


def usage_of(body: dict[str, Any], content: str) -> dict[str, int]:
    """The token counts this server reports: whitespace words of the messages' text, and of the reply."""
    prompt = 0
    for m in body.get("messages", []):
        parts = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        prompt += sum(len(str(p.get("text", "")).split()) for p in parts if p.get("type") == "text")
    completion = len(content.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
