"""A running job's heartbeat: proof, every few seconds, that a live worker holds the job.

The beat comes from a small thread beside the work, not from the work's loops, because the
loops cannot always write: an import inserts every row in one transaction (a heartbeat written
inside it is invisible until it commits), and agreement statistics run inside library code.
The thread (``core.job_thread``) uses its own database connection, so its writes commit at once,
one small UPDATE per interval whatever the work does (a bounded rate, never a write per row). It proves the process
is alive, which is what ``core.reaper`` needs to tell a job whose worker was killed (no beats)
from a slow one; a hung call is bounded by the work's own timeouts (judge backends have them).

On SQLite (the embedded demo) a beat waits while another connection holds the write lock; a
beat that times out is logged and the next one tries again, so the lease
(``HV_JOB_LEASE_SECONDS``) must exceed the longest single write transaction."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .job_thread import JobRowThread


def lease_seconds() -> float:
    """How long a running job may go without a heartbeat before it counts as lost."""
    return float(settings.HV_JOB_LEASE_SECONDS)


def interval_seconds() -> float:
    """Beat eight times per lease (15 s for the default 120 s): several beats can be missed
    (a busy database, a long SQLite write) before the lease runs out."""
    return max(0.2, lease_seconds() / 8)


class Heartbeat(JobRowThread):
    """``with Heartbeat(Model, pk, attempt=n):`` beats ``heartbeat_at`` of that job row while
    the block runs, only while the job is running (and, given ``attempt``, still this claim's:
    a worker whose job was handed on does not keep the new claim's lease alive)."""

    kind = "heartbeat"

    def __init__(self, model: type[models.Model], pk: int, *, attempt: int | None = None) -> None:
        super().__init__(model, pk, attempt=attempt, interval=interval_seconds())
        self.beats = 0

    def tick(self) -> bool:
        return self.beat()

    def beat(self) -> bool:
        """One heartbeat now; False when the row is no longer a running job of this claim."""
        alive = self.claimed().update(heartbeat_at=timezone.now()) > 0
        self.beats += 1
        return alive
