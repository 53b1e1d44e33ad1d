"""The two requests an annotating API client makes in a loop, served without DRF (issue 15):

- ``GET /api/assignments/<id>/``: the item to show (opens it), as ``api.AssignmentViewSet.retrieve``;
- ``POST /api/assignments/<id>/submit/``: the answer, whose reply names the next assignment, as
  ``api.AssignmentViewSet.submit``.

:class:`HotPathMiddleware` (the innermost middleware, so sessions, CSRF cookies, security
headers and the CSP are the same as for every page) answers them with the statements of
``annotation.hotpath`` when the request is the common case: a browser session of an active user
(no Authorization header), JSON in and out, no query string, within the API rates. It answers
with the same status, body and headers the DRF view gives. Anything else, and every refusal
(not found, not valid, closed, already submitted, CSRF, 429), is handed to the DRF view
unchanged, which stays the reference; the rates counted here are not counted again there."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.authentication import CSRFCheck
from rest_framework.settings import api_settings
from rest_framework.utils.encoders import JSONEncoder

from annotation import hotpath
from annotation.models import RubricVersion
from annotation.presentation import annotator_item_payload, item_render_context
from core.security import THROTTLE_COUNTED, VerifiedSession, forget_session, verified_session
from studies import pool

from . import annotating

_DETAIL = re.compile(r"^/api/assignments/([0-9]{1,18})/$")
_SUBMIT = re.compile(r"^/api/assignments/([0-9]{1,18})/submit/$")
#: media types for which DRF's content negotiation picks its JSON renderer (the first one)
_JSON_ACCEPT = {"*/*", "application/*", "application/json"}


def _json(data: Any) -> bytes:
    """Exactly DRF's ``JSONRenderer`` output (compact, UTF-8, no NaN, U+2028/9 escaped)."""
    text = json.dumps(data, cls=JSONEncoder, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


_RUBRIC_JSON: dict[tuple[int, str], bytes] = {}


def rubric_json(version: RubricVersion) -> bytes:
    """A rubric version's schema as JSON, encoded once per process: every item of a project
    carries the same rubric, so its ~6 KB are not serialised again for each item."""
    key = (version.pk, version.schema_hash)
    found = _RUBRIC_JSON.get(key)
    if found is None:
        found = _RUBRIC_JSON[key] = _json(version.parsed().raw)
    return found


def _reply(body: bytes, status: int, allow: str) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type="application/json")
    # what DRF's APIView adds: its allowed methods, and Vary: Accept (it has two renderers)
    response["Allow"] = allow
    response["Vary"] = "Accept"
    return response


def _accepts_json(request: HttpRequest) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    if not accept:
        return True
    return all(part.split(";", 1)[0].strip().lower() in _JSON_ACCEPT for part in accept.split(","))


class _Caller:
    """The authenticated user as the rate limits read it (its key is the user's pk)."""

    is_authenticated = True

    def __init__(self, pk: int) -> None:
        self.pk = pk


class _ThrottleRequest:
    def __init__(self, request: HttpRequest, uid: int) -> None:
        self.user = _Caller(uid)
        self.META = request.META
        self._request = request


def _within_rates(request: HttpRequest, uid: int) -> bool:
    """DRF's rate limits (the settings' classes), counted as the DRF view counts them."""
    shim = _ThrottleRequest(request, uid)
    for throttle_class in api_settings.DEFAULT_THROTTLE_CLASSES:
        if not throttle_class().allow_request(shim, None):
            return False
    setattr(request, THROTTLE_COUNTED, True)
    return True


def _csrf_ok(request: HttpRequest) -> bool:
    """DRF's check for a session-authenticated unsafe request (``SessionAuthentication``)."""
    check = CSRFCheck(lambda _request: None)
    check.process_request(request)
    return check.process_view(request, None, (), {}) is None


def _reject_constant(value: str) -> Any:
    raise ValueError(f"{value} is not valid JSON")  # DRF's parser refuses NaN and Infinity too


class HotPathMiddleware:
    """Serves the annotate loop's two API requests on the lean path (see the module docstring);
    everything else goes on to the view."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith("/api/assignments/") and settings.HV_LEAN_API:
            response = self.serve(request)
            if response is not None:
                return response
        return self.get_response(request)

    def serve(self, request: HttpRequest) -> HttpResponse | None:
        """The lean answer, or None to let the DRF view answer."""
        if request.method == "GET":
            match = _DETAIL.match(request.path_info)
        elif request.method == "POST":
            match = _SUBMIT.match(request.path_info)
        else:
            return None
        meta = request.META
        if match is None or meta.get("QUERY_STRING") or "HTTP_AUTHORIZATION" in meta or not _accepts_json(request):
            return None
        session = verified_session(request)
        if session is None:
            return None
        if request.method == "POST":
            # JSON first: the CSRF check reads request.POST, which would consume a form body
            # that the view must still see (DRF refuses it with 415)
            charset = (request.content_params.get("charset") or "utf-8").lower()
            if request.content_type != "application/json" or charset not in ("utf-8", "utf8"):
                return None
            if not _csrf_ok(request):
                return None
        if not _within_rates(request, session.uid):
            return None
        if request.method == "GET":
            return self.detail(session, int(match.group(1)))
        return self.submit(request, session, int(match.group(1)))

    def detail(self, session: VerifiedSession, assignment_id: int) -> HttpResponse | None:
        loaded = hotpath.load_mine(session=session, assignment_id=assignment_id, kind="open")
        if loaded is None:
            # not theirs, or the session no longer holds (password changed, user deactivated):
            # verify it again next time; the view gives its 404 / 403 now
            forget_session(session)
            return None
        assignment = loaded.assignment
        if assignment.plan_id is not None:
            pool.renew_lease(assignment)  # as annotating.open_assignment
        item = annotator_item_payload(assignment=assignment, item_ctx=item_render_context(assignment.item))
        version = assignment.project.rubric_version
        body = b"".join(
            [
                b'{"id":%d,"project":%d,"status":' % (assignment.pk, assignment.project_id),
                _json(assignment.status),
                b',"item":',
                _json(item),
                b',"rubric":',
                rubric_json(version),
                b',"rubric_version":%d,"answers":' % version.version,
                _json(loaded.answers),
                b"}",
            ]
        )
        return _reply(body, 200, "GET, HEAD, OPTIONS")

    def submit(self, request: HttpRequest, session: VerifiedSession, assignment_id: int) -> HttpResponse | None:
        try:
            data = json.loads(request.body, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
            return None
        duration = data.get("duration_ms")
        if "duration_ms" in data and not (type(duration) is int and duration >= 0):
            return None  # the serializer's own answer for anything else
        locale = data.get("locale", "")
        if (
            not isinstance(locale, str)
            or len(locale.strip()) > annotating.LOCALE_MAX_LENGTH
            or not locale.isprintable()
        ):
            return None  # the serializer's own answer (it also takes numbers as text)
        done = annotating.submit_mine(
            session=session,
            assignment_id=assignment_id,
            answers=data["answers"],
            duration_ms=duration,
            locale=locale.strip(),  # as the serializer's CharField trims it
        )
        if done.loaded is None:
            forget_session(session)
            return None
        if done.error is not None:
            return None  # rolled back; the view refuses it in its own words
        annotation = done.stored.annotation
        body = _json(
            {
                "answers": annotation.answers,
                "derived": annotation.derived,
                "revision": annotation.revision,
                "next": done.next_id,
            }
        )
        return _reply(body, 201, "POST, OPTIONS")
