"""What every page's header needs to know about the user (``config.settings`` lists this)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .selectors import uses_the_api


def header(request: HttpRequest) -> dict[str, Any]:
    # lazy: a page whose header does not ask (a JSON answer, a redirect) makes no query
    user = getattr(request, "user", None)
    return {"shows_api_links": SimpleLazyObject(lambda: bool(user is not None and uses_the_api(user)))}
