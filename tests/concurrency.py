"""The thread runner of the concurrency tests (tests/annotation/test_import_concurrency.py,
tests/judges/test_import_concurrency.py, tests/studies/test_pool_concurrency.py): each thread
has its own database connection (closed when it ends), which is what concurrent requests or
workers have. Those tests need real PostgreSQL: its row locks and unique indexes are what they
check, SQLite serialises every writer."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections

from tests import services as test_services


def require_postgres() -> None:
    """Skip (fail under scripts/test and in CI) a concurrency test away from PostgreSQL."""
    if connection.vendor != "postgresql":
        if test_services.services_required():
            pytest.fail("the concurrency tests need PostgreSQL")
        pytest.skip("the concurrency tests need PostgreSQL (run scripts/test)")


def in_threads(
    n: int, target: Callable[[int], object], *, start_together: bool = False, timeout: float = 120
) -> list[BaseException]:
    """Run ``target(0)`` .. ``target(n - 1)`` in ``n`` threads (all released at once with
    ``start_together``) and wait for them; the exceptions they raised. Fails the test when a
    thread is still running after ``timeout`` seconds (a deadlock, a lock never released)."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(n) if start_together else None

    def wrapper(idx: int) -> None:
        try:
            if barrier is not None:
                barrier.wait()
            target(idx)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrapper, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def wait_for_each_other_after(monkeypatch, module: object, name: str, n: int) -> None:
    """Make ``module.name`` (an import's check) wait, once it has returned, until ``n`` callers
    have returned from it: every import has checked (found no done import of its file, the name
    free) before any writes, the widest window a check before the write leaves open."""
    barrier = threading.Barrier(n, timeout=60)
    real = getattr(module, name)

    def then_wait(*args, **kwargs):
        result = real(*args, **kwargs)
        barrier.wait()
        return result

    monkeypatch.setattr(module, name, then_wait)
