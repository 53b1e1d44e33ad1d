"""``/healthz``: whether this web process can reach its database (and its broker), without
authentication, for load balancers and orchestrators. 200 when the database answers, 503 when
not; the broker is reported but does not fail the check (pages work without it)."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "not ok"
        return f"error: {type(exc).__name__}"
    return "ok"


def _broker() -> str:
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem"):
        return "filesystem"
    if url.startswith(("redis://", "rediss://")):
        try:
            import redis

            client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
            try:
                client.ping()
            finally:
                client.close()
        except Exception as exc:
            return f"error: {type(exc).__name__}"
        return "ok"
    return "unchecked"


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    body = {"database": _database(), "broker": _broker()}
    return JsonResponse(body, status=200 if body["database"] == "ok" else 503)
