"""The one error type of the domain.

A service refuses a request by raising :class:`DomainError` with a message a user can act on
and a ``code`` saying what kind of refusal it is. Pages show the message (``core.pages``), the
API answers with the status the code maps to (``core.api.exception_handler``); nothing else
needs to know which app raised it."""

from __future__ import annotations

import re
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


#: an absolute POSIX path of two or more parts (``/srv/hv/var/media/imports/x.jsonl``), as an
#: exception's text carries it ("No such file or directory: '/srv/...'")
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/-])/(?:[^\s'\"/:]+/)+([^\s'\"/:]*)")


def public_text(exc: BaseException, *, fallback: str = "an unexpected error (details in the server log)") -> str:
    """What a person may be shown of an unexpected exception: its message on one line with every
    absolute server path cut to its last part, without the exception's type name (issue 37: job
    failures, judge failures and export notes showed both). ``fallback`` when nothing is left.
    The full exception goes to the log, where the operator reads it."""
    text = " ".join(str(exc).split())
    text = _ABSOLUTE_PATH.sub(lambda m: m.group(1) or "(a server path)", text)
    return text or fallback
