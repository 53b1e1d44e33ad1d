"""The one error type of the domain.

A service refuses a request by raising :class:`DomainError` with a message a user can act on
and a ``code`` saying what kind of refusal it is. Pages show the message (``core.pages``), the
API answers with the status the code maps to (``core.api.exception_handler``); nothing else
needs to know which app raised it."""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal["invalid", "not_found", "forbidden", "conflict", "unavailable"]

#: HTTP status per code, used by the API handler and by pages that answer with a status.
HTTP_STATUS: dict[str, int] = {
    "invalid": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "unavailable": 503,
}


class DomainError(Exception):
    """A request the domain refuses.

    ``errors`` carries per-field (a dict) or per-line (a list) details, e.g. the line numbers of
    a refused import or the rubric questions left unanswered."""

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode = "invalid",
        errors: list[str] | dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        if code not in HTTP_STATUS:
            raise ValueError(f"unknown error code {code!r}")
        self.message = message
        self.code = code
        self.errors = errors or []

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[self.code]
