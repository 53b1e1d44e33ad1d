"""Self-test of the test infrastructure: the real services answer, a real Celery worker
consumes from Redis, and Chromium renders a page."""

from __future__ import annotations

import pytest

from tests import services


@pytest.mark.django_db
def test_database_vendor():
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone()[0] == 1
    if services.embedded_pass():
        assert connection.vendor == "sqlite"
    elif services.services_required():
        assert connection.vendor == "postgresql"
        assert connection.settings_dict["NAME"].startswith("test_")


def test_redis_ping(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        assert client.ping() is True
        client.set("hv:infra-probe", "1", ex=30)
        assert client.get("hv:infra-probe") == b"1"
    finally:
        client.close()


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_celery_worker_round_trip(celery_worker_process):
    from config.celery import app

    worker = celery_worker_process
    # remote control through the broker
    replies = app.control.ping(destination=[worker.hostname], timeout=5.0)
    assert any(worker.hostname in r for r in replies), replies
    # a real task, published by this process, executed by the worker, result via Redis
    result = app.send_task("celery.accumulate", args=(7, "x"), ignore_result=False)
    assert result.get(timeout=30) == [7, "x"]
    assert worker.wait_for_log(f"Task celery.accumulate[{result.id}] succeeded")
    # the worker reads the same (test) database as this process and sees committed rows
    from django.contrib.auth import get_user_model
    from django.db import connection

    get_user_model().objects.create_user("infra-probe", password="x")
    seen = app.send_task(services.DB_PROBE, args=("infra-probe",), ignore_result=False)
    assert seen.get(timeout=30) == {
        "vendor": connection.vendor,
        "name": connection.settings_dict["NAME"],
        "user_exists": True,
    }


@pytest.mark.browser
def test_chromium_opens_a_page(page):
    page.goto("about:blank")
    page.set_content("<title>hv</title><p id=x>ok</p>")
    assert page.title() == "hv"
    assert page.text_content("#x") == "ok"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_chromium_reaches_live_server(page, live_server):
    resp = page.goto(live_server.url + "/")
    assert resp is not None and resp.status < 500
