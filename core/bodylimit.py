"""Request bodies over the configured limit are refused with 413 before they are read (issue 23,
finding 3).

``BodyLimitMiddleware`` is the first middleware (``config/settings.py``), so it runs before
anything reads the body (the session, CSRF and authentication layers, DRF's parsers, the views),
for every route, signed in or not:

- a ``Content-Length`` over ``HV_MAX_BODY_BYTES`` is answered 413 at once; not one byte of the
  body is read (Django, not the view, would otherwise spool it to a temporary file);
- a body without a length (``Transfer-Encoding: chunked``, which gunicorn passes on) has its own,
  smaller limit, ``HV_MAX_CHUNKED_BODY_BYTES`` (default ``HV_MAX_REQUEST_BYTES``, 10 MiB; never more):
  it is read in blocks into memory, counting, and one byte over the limit is a 413, the rest
  never read. Issue 37, M8: it used to be read up to the whole body limit (528 MiB) into the
  system's temporary directory before the 413, by anyone, signed in or not; browsers and the
  usual clients send a length with every upload (``curl -F``, ``requests`` with a file), so a
  large body without one is refused rather than spooled. A body within the limit is handed to
  Django with its length, as if it had been sent with one, and its buffer is released when the
  response is made (it used to stay in a spool file as long as the request object lived).

A 413 closes the connection (``Connection: close``), so the server does not read the rest to
keep the connection alive. The limit (default ``HV_MAX_UPLOAD_BYTES`` plus 16 MiB for the
multipart envelope and the form's other fields) should match the reverse proxy's
(nginx ``client_max_body_size``): ``docs/security.md``."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger("django.security.BodyLimit")

BLOCK = 64 * 1024


def max_body_bytes() -> int:
    return int(settings.HV_MAX_BODY_BYTES)


def max_chunked_body_bytes() -> int:
    """The limit of a body sent without a length: it is held in memory, so it is the smaller one."""
    return min(int(settings.HV_MAX_CHUNKED_BODY_BYTES), max_body_bytes())


def too_large(limit: int, *, chunked: bool = False) -> HttpResponse:
    how = " without a Content-Length (send one for a larger body)" if chunked else ""
    response = HttpResponse(
        f"Request body too large: at most {limit} bytes{how}.\n",
        status=413,
        content_type="text/plain; charset=utf-8",
    )
    response["Connection"] = "close"
    return response


def _chunked(request: HttpRequest) -> bool:
    te = request.META.get("HTTP_TRANSFER_ENCODING", "")
    return "chunked" in te.lower()


class BodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = max_body_bytes()
        raw = str(request.META.get("CONTENT_LENGTH") or "").strip()
        if raw:
            try:
                length = int(raw)
            except ValueError:
                return HttpResponse("Bad Content-Length.\n", status=400, content_type="text/plain; charset=utf-8")
            if length > limit:
                logger.warning("refused a %d-byte body (limit %d): %s %s", length, limit, request.method, request.path)
                return too_large(limit)
        elif _chunked(request):
            buffer = self._read_chunked(request, max_chunked_body_bytes())
            if isinstance(buffer, HttpResponse):
                return buffer
            try:
                return self.get_response(request)
            finally:
                buffer.close()  # the body's memory goes with the response, not with the request object
        return self.get_response(request)

    def _read_chunked(self, request: HttpRequest, limit: int) -> io.BytesIO | HttpResponse:
        """Read a body without a length up to ``limit`` bytes, in memory: over it, 413 (the rest
        never read); else the buffer, given to Django as the body's stream of known length."""
        stream = request.META["wsgi.input"]
        buffer = io.BytesIO()
        size = 0
        while True:
            block = stream.read(min(BLOCK, limit + 1 - size))
            if not block:
                break
            size += len(block)
            if size > limit:
                buffer.close()
                logger.warning("refused a chunked body over %d bytes: %s %s", limit, request.method, request.path)
                return too_large(limit, chunked=True)
            buffer.write(block)
        buffer.seek(0)
        request.META["CONTENT_LENGTH"] = str(size)
        request._stream = buffer  # Django's own body stream, replaced before any read
        request._read_started = False
        request.META.pop("HTTP_TRANSFER_ENCODING", None)
        return buffer
