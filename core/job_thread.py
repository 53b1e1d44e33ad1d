"""A thread beside a running job that writes to the job's row a few times a second.

Both :class:`core.heartbeat.Heartbeat` and :class:`core.progress.ProgressWriter` are one: the
work cannot write its own row while it runs (an import inserts every row in one transaction, so a
write from the work's connection stays invisible until it commits; statistics run inside library
code), so a small thread writes on its own database connection, whose writes commit at once. It
writes only while the row is this claim's running job, so it never overwrites an outcome or keeps
a job alive that was handed to another worker.

On SQLite a write waits while another connection holds the write lock; a write that times out is
logged and the next one tries again."""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Self

from django.db import connections, models

logger = logging.getLogger(__name__)


class JobRowThread:
    """``with Subclass(Model, pk, attempt=n):`` calls :meth:`tick` every ``interval`` seconds on
    a thread of its own while the block runs. ``kind`` names the thread and its log lines."""

    kind = "job-row"

    def __init__(self, model: type[models.Model], pk: int, *, attempt: int | None, interval: float) -> None:
        self.model, self.pk, self.attempt, self.interval = model, pk, attempt, interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def claimed(self) -> models.QuerySet:
        """The job's row while it is running under this claim (empty once it is not)."""
        qs = self.model.objects.filter(pk=self.pk, status="running")
        if self.attempt is not None:
            qs = qs.filter(attempts=self.attempt)
        return qs

    def tick(self) -> bool:
        """One write; False when the row is no longer this claim's running job."""
        raise NotImplementedError

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.tick()
                except Exception:  # a locked SQLite, a dropped connection: try again next time
                    logger.warning("%s of %s %s not written", self.kind, self.model.__name__, self.pk, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connections only

    def __enter__(self) -> Self:
        self._thread = threading.Thread(
            target=self._loop, name=f"{self.kind}-{self.model.__name__}-{self.pk}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
