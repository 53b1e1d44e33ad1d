"""``judges/backends/model_cache.py``: a model is loaded once per process however many threads
ask for it at once, and a load that fails stores nothing (the next caller tries again)."""

from __future__ import annotations

import threading
import time

import pytest

from judges.backends.base import BackendUnavailable
from judges.backends.model_cache import ModelCache


def test_many_threads_asking_at_once_load_the_model_once():
    cache: ModelCache[str, object] = ModelCache()
    loads = []

    def load() -> object:
        loads.append(1)
        time.sleep(0.05)  # a slow load: the others arrive while it runs
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("m", load))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and len(got) == 8 and all(g is got[0] for g in got)
    assert cache.keys() == ["m"]
    assert cache.get("other", object) is not got[0] and cache.keys() == ["m", "other"]


def test_a_failed_load_stores_nothing_and_is_tried_again():
    cache: ModelCache[str, str] = ModelCache()

    def broken() -> str:
        raise BackendUnavailable("cannot load model 'm'")

    with pytest.raises(BackendUnavailable, match="cannot load"):
        cache.get("m", broken)
    assert cache.keys() == []
    assert cache.get("m", lambda: "loaded") == "loaded" and cache.keys() == ["m"]
