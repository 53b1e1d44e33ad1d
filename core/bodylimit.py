"""Request bodies over the configured limit are refused with 413 before they are read (issue 23,
finding 3).

``BodyLimitMiddleware`` is the first middleware (``config/settings.py``), so it runs before
anything reads the body (the session, CSRF and authentication layers, DRF's parsers, the views),
for every route, signed in or not:

- a ``Content-Length`` over ``HV_MAX_BODY_BYTES`` is answered 413 at once; not one byte of the
  body is read (Django, not the view, would otherwise spool it to a temporary file);
- a body without a length (``Transfer-Encoding: chunked``, which gunicorn passes on) is read in
  blocks, counting, up to the limit: one byte more and the answer is 413, the rest never read;
  a body within the limit is handed to Django with its length, as if it had been sent with one.

A 413 closes the connection (``Connection: close``), so the server does not read the rest to
keep the connection alive. The limit (default ``HV_MAX_UPLOAD_BYTES`` plus 16 MiB for the
multipart envelope and the form's other fields) should match the reverse proxy's
(nginx ``client_max_body_size``): ``docs/security.md``."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger("django.security.BodyLimit")

BLOCK = 64 * 1024
#: a chunked body within the limit stays in memory up to this size, then in a temporary file
SPOOL_IN_MEMORY = 1024 * 1024


def max_body_bytes() -> int:
    return int(settings.HV_MAX_BODY_BYTES)


def too_large(limit: int) -> HttpResponse:
    response = HttpResponse(
        f"Request body too large: at most {limit} bytes.\n", status=413, content_type="text/plain; charset=utf-8"
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
            refused = self._read_chunked(request, limit)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _read_chunked(self, request: HttpRequest, limit: int) -> HttpResponse | None:
        """Read a body without a length up to ``limit`` bytes: over it, 413; else the body is
        given to Django as a stream of known length."""
        stream = request.META["wsgi.input"]
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - closed with the request
        size = 0
        while True:
            block = stream.read(min(BLOCK, limit + 1 - size))
            if not block:
                break
            size += len(block)
            if size > limit:
                spool.close()
                logger.warning("refused a chunked body over %d bytes: %s %s", limit, request.method, request.path)
                return too_large(limit)
            spool.write(block)
        spool.seek(0)
        request.META["CONTENT_LENGTH"] = str(size)
        request._stream = spool  # Django's own body stream, replaced before any read
        request._read_started = False
        request.META.pop("HTTP_TRANSFER_ENCODING", None)
        return None
