"""A running job's progress, written where a page polling the job can read it.

The work only records a number in memory (:meth:`ProgressWriter.set`, cheap enough for every
line of an import); a small thread writes the latest number to the job's row a few times a
second, on its own database connection. That is what lets progress show during an import's write
phase, which inserts every row in one transaction: a write from the work's own connection would
stay invisible until that transaction commits. The thread is ``core.job_thread``'s, as the
heartbeat's is: it writes only while the row is this claim's running job, so it never overwrites
an outcome (once the job is done or failed, its writes match nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import models

from .job_thread import JobRowThread

#: seconds between writes: often enough for a bar polled every second to move smoothly
INTERVAL_SECONDS = 0.4


class ProgressWriter(JobRowThread):
    """``with ProgressWriter(Model, pk, attempt=n, fields=f) as progress: ... progress.set(0.4)``
    writes ``f(0.4)`` (the columns holding the fraction done) to that job row while the block
    runs, only while the row is running under attempt ``n``."""

    kind = "progress"

    def __init__(
        self,
        model: type[models.Model],
        pk: int,
        *,
        attempt: int | None,
        fields: Callable[[float, str], dict[str, Any]],
        interval: float = INTERVAL_SECONDS,
    ) -> None:
        super().__init__(model, pk, attempt=attempt, interval=interval)
        self.fields = fields
        self._value: tuple[float, str] = (0.0, "")
        self._written: tuple[float, str] | None = self._value  # nothing to write until set()
        self.writes = 0

    def set(self, fraction: float, phase: str = "") -> None:
        """Record progress (0..1, clamped) and what the work is doing; written by the thread."""
        self._value = (min(max(float(fraction), 0.0), 1.0), phase)

    @property
    def value(self) -> float:
        return self._value[0]

    def tick(self) -> bool:
        return self.write()

    def write(self) -> bool:
        """Write the latest value now if it changed; False when the row is no longer this claim's
        running job (or nothing changed)."""
        value = self._value
        if value == self._written:
            return False
        written = self.claimed().update(**self.fields(*value)) > 0
        self._written = value
        self.writes += written
        return written
