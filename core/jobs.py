r"""One lifecycle for every background job: imports, agreement reports, exports, judge runs.

    queued --start()--> running --finish()--> done
       \                      \--fail()----> failed (with a message a user can read)
        \----------------------\--cancel()--> cancelled (judge runs: what was done stays)

A job is a row (a :class:`Job` subclass). It is created inside the request's transaction and
handed to the broker only once that transaction commits (:func:`enqueue_on_commit`), so a
worker never looks for a row that is not there yet; if the broker refuses the task the job is
failed with the reason instead of staying queued for ever. :func:`run` wraps a worker's work
so that an error of any kind ends the job as failed with its message, never as a crashed
worker and a job left ``running``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import models, transaction
from django.utils import timezone

from .errors import DomainError

logger = logging.getLogger(__name__)


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


PENDING = (JobStatus.QUEUED, JobStatus.RUNNING)
TERMINAL = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)
MAX_MESSAGE = 5000


class Job(models.Model):
    """The columns every job has. Subclasses add what the job is about (parameters, progress,
    results) and say where a failure's message goes (:meth:`failure_fields`)."""

    Status = JobStatus

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_pending(self) -> bool:
        return self.status in PENDING

    def failure_fields(self, message: str) -> dict[str, Any]:
        """The columns that record why the job failed. Default: a ``message`` column."""
        return {"message": message[:MAX_MESSAGE]}

    def running_fields(self) -> dict[str, Any]:
        """Columns reset when the job starts (e.g. progress back to 0)."""
        return {"progress": 0.0} if any(f.name == "progress" for f in self._meta.fields) else {}


J = TypeVar("J", bound=Job)


class Refused(DomainError):
    """Raised by a job's work when its input is refused as a whole (e.g. an import with bad
    lines): the job ends failed, storing ``fields`` (the report that says why) as its result."""

    def __init__(self, message: str, *, fields: dict[str, Any]) -> None:
        super().__init__(message)
        self.fields = fields


def _update(job: Job, *, only_pending: bool = False, **fields: Any) -> bool:
    qs = type(job).objects.filter(pk=job.pk)
    if only_pending:
        qs = qs.filter(status__in=PENDING)
    changed = qs.update(**fields) > 0
    if changed:  # a job that had already ended keeps its outcome, in memory as in the table
        for name, value in fields.items():
            setattr(job, name, value)
    return changed


def start(job: Job) -> None:
    _update(job, status=JobStatus.RUNNING, **job.running_fields())


def finish(job: Job, **fields: Any) -> None:
    """Done, storing the job's results (``fields``) in the same write."""
    _update(job, status=JobStatus.DONE, finished_at=timezone.now(), **fields)


def fail(job: Job, message: str) -> None:
    """Failed, with why. A job that already ended (done, failed, cancelled) keeps its outcome."""
    _update(job, only_pending=True, status=JobStatus.FAILED, finished_at=timezone.now(), **job.failure_fields(message))


def cancel(job: Job, message: str = "cancelled") -> bool:
    """Cancelled, if still pending; False when the job had already ended (it keeps its outcome)."""
    return _update(
        job, only_pending=True, status=JobStatus.CANCELLED, finished_at=timezone.now(), **job.failure_fields(message)
    )


def run(job: J, work: Callable[[J], dict[str, Any]]) -> J:
    """Run ``work`` for a job on a worker (or inline): running, then done with the columns it
    returns, or failed with the reason. A domain refusal keeps its message; anything else is
    logged and recorded with its type, so a researcher sees why and an operator finds it."""
    start(job)
    try:
        results = work(job)
    except Refused as exc:
        _update(job, only_pending=True, status=JobStatus.FAILED, finished_at=timezone.now(), **exc.fields)
    except DomainError as exc:
        fail(job, exc.message)
    except Exception as exc:
        logger.exception("%s %s failed", type(job).__name__, job.pk)
        fail(job, f"internal error: {type(exc).__name__}: {exc}")
    else:
        finish(job, **results)
    return job


def send_or_fail(send: Callable[[], object], fail: Callable[[str], None]) -> bool:
    """Hand a task to the broker. If the broker cannot take it, record why (through ``fail``)
    instead of leaving the job queued for ever."""
    try:
        send()
    except Exception as exc:
        fail(
            f"the task queue could not be reached ({exc.__class__.__name__}: {exc}); "
            "check that the broker and a worker are running, then try again"
        )
        return False
    return True


def enqueue_on_commit(job: Job, send: Callable[[], object]) -> None:
    """Hand the job's task to the broker once the current transaction commits; if the broker
    cannot take it, fail the job with the reason."""
    transaction.on_commit(lambda: send_or_fail(send, lambda message: fail(job, message)))
