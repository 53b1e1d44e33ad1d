"""A running job's progress, written where a page polling the job can read it.

The work only records a number in memory (:meth:`ProgressWriter.set`, cheap enough for every
line of an import); a small thread writes the latest number to the job's row a few times a
second, on its own database connection. That is what lets progress show during an import's write
phase, which inserts every row in one transaction: a write from the work's own connection would
stay invisible until that transaction commits (``core.heartbeat`` beats the same way, for the same
reason). The thread writes only while the row is this claim's running job, so it never
overwrites an outcome: once the job is done or failed, its writes match nothing.

On SQLite a write waits while another connection holds the write lock; a write that times out is
logged and the next one tries again."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

from django.db import connections, models

logger = logging.getLogger(__name__)

#: seconds between writes: often enough for a bar polled every second to move smoothly
INTERVAL_SECONDS = 0.4


class ProgressWriter:
    """``with ProgressWriter(Model, pk, attempt=n, fields=f) as progress: ... progress.set(0.4)``
    writes ``f(0.4)`` (the columns holding the fraction done) to that job row while the block
    runs, only while the row is running under attempt ``n``."""

    def __init__(
        self,
        model: type[models.Model],
        pk: int,
        *,
        attempt: int | None,
        fields: Callable[[float, str], dict[str, Any]],
        interval: float = INTERVAL_SECONDS,
    ) -> None:
        self.model, self.pk, self.attempt, self.fields = model, pk, attempt, fields
        self.interval = interval
        self._value: tuple[float, str] = (0.0, "")
        self._written: tuple[float, str] | None = self._value  # nothing to write until set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.writes = 0

    def set(self, fraction: float, phase: str = "") -> None:
        """Record progress (0..1, clamped) and what the work is doing; written by the thread."""
        self._value = (min(max(float(fraction), 0.0), 1.0), phase)

    @property
    def value(self) -> float:
        return self._value[0]

    def write(self) -> bool:
        """Write the latest value now if it changed; False when the row is no longer this claim's
        running job (or nothing changed)."""
        value = self._value
        if value == self._written:
            return False
        qs = self.model.objects.filter(pk=self.pk, status="running")
        if self.attempt is not None:
            qs = qs.filter(attempts=self.attempt)
        written = qs.update(**self.fields(*value)) > 0
        self._written = value
        self.writes += written
        return written

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.write()
                except Exception:  # a locked SQLite, a dropped connection: try again next time
                    logger.warning("progress of %s %s not written", self.model.__name__, self.pk, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connections only

    def __enter__(self) -> ProgressWriter:
        self._thread = threading.Thread(
            target=self._loop, name=f"progress-{self.model.__name__}-{self.pk}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
