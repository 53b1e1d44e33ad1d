"""Models loaded once per worker process.

A GPU worker runs one process per device (``docker-compose.yml``), and every chunk of every run
builds its backend anew: the weights must not be. Each backend keeps its models in a
:class:`ModelCache` keyed by what makes a copy different (model id, device, dtype, ...). Loading
holds the cache's lock, so two threads asking for the same model load it once; a load that
fails (``BackendUnavailable``) stores nothing and is tried again by the next caller."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)
Loaded = TypeVar("Loaded")


class ModelCache(Generic[Key, Loaded]):
    def __init__(self) -> None:
        self._loaded: dict[Key, Loaded] = {}
        self._lock = threading.Lock()

    def get(self, key: Key, load: Callable[[], Loaded]) -> Loaded:
        """The model under ``key``, loaded by ``load()`` the first time it is asked for."""
        with self._lock:
            if key not in self._loaded:
                self._loaded[key] = load()
            return self._loaded[key]

    def keys(self) -> list[Key]:
        return list(self._loaded)
