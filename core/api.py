"""How the REST API shows a :class:`core.errors.DomainError`: the status its code maps to and a
body ``{"detail": message, "code": code[, "errors": ...]}``, the same shape DRF gives its own
validation errors, so a client reads every refusal one way."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import DomainError


def error_body(exc: DomainError) -> dict[str, Any]:
    body: dict[str, Any] = {"detail": exc.message, "code": exc.code}
    if exc.errors:
        body["errors"] = exc.errors
    return body


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """``REST_FRAMEWORK["EXCEPTION_HANDLER"]``: domain errors first, then DRF's own handling."""
    if isinstance(exc, DomainError):
        return Response(error_body(exc), status=exc.http_status)
    if isinstance(exc, RecursionError):  # a JSON body nested so deeply the parser gave up
        return Response(
            {"detail": "the JSON body is nested too deeply", "code": "invalid"}, status=status.HTTP_400_BAD_REQUEST
        )
    return drf_exception_handler(exc, context)


class Pagination(LimitOffsetPagination):
    """Every paginated list of the API (``?limit=&offset=``): DRF's, with ``limit`` capped at
    :attr:`max_limit`. Uncapped, ``?limit=9223372036854775808`` (2^63) became ``LIMIT`` past
    PostgreSQL's bigint and SQLite's integer, a server error (issue 37, M6); capped, any larger
    number reads as the cap, as DRF documents for ``max_limit``. An ``offset`` past the list's
    end is already an empty page (DRF compares it with the count before it queries)."""

    max_limit = 1000
