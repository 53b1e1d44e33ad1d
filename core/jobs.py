r"""One lifecycle for every background job: imports, agreement reports, exports, judge runs.

    queued --start()--> running --finish()--> done
       \                      \--fail()----> failed (with a message a user can read)
        \----------------------\--cancel()--> cancelled (judge runs: what was done stays)

A job is a row (a :class:`Job` subclass). It is created inside the request's transaction and
handed to the broker only once that transaction commits (:func:`enqueue_on_commit`), so a
worker never looks for a row that is not there yet; if the broker refuses the task the job is
failed with the reason instead of staying queued for ever. How a job goes to the broker is said
once per job type, by the app's ``tasks`` module (:func:`register_sender`); the services and the
reaper send through it (:func:`send`), and no model imports its task. :func:`run` wraps a worker's work
so that an error of any kind ends the job as failed with its message, never as a crashed
worker and a job left ``running``.

A worker can also die without a word (``kill -9``, the OOM killer, a lost machine). So a running
job holds a lease: it records ``heartbeat_at`` while it works (``core.heartbeat``), and
``core.reaper`` re-queues or fails a job whose heartbeat stopped. Starting is a claim
(queued -> running, ``attempts`` + 1) and ending is conditional on still holding that claim, so
a duplicate delivery of the task, or a worker that comes back after its job was handed to
another one, changes nothing."""

from __future__ import annotations

import importlib
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import models, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .errors import DomainError, public_text
from .heartbeat import Heartbeat

logger = logging.getLogger(__name__)


class JobStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


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
    # The lease (core.heartbeat, core.reaper): when a worker last said it is working on the job,
    # which worker ("host:pid"), and how many times the job was started (bounded re-queues).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

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

    # -- what the reaper (core.reaper) does with a job whose worker stopped
    def resume_blocker(self) -> str | None:
        """Why this job cannot be started again after its worker died (None: it can). Default:
        it can, its work is redone from the start (exports, reports: their output is rewritten)."""
        return None

    def requeue_fields(self) -> dict[str, Any]:
        """Columns written when the reaper hands the job to a worker again. Default: back to
        queued, so the re-sent task claims it (and a duplicate delivery does not)."""
        return {"status": JobStatus.QUEUED}


J = TypeVar("J", bound=Job)


class Superseded(Exception):
    """Raised when a worker finds it no longer holds its job's claim (the job was cancelled, or
    the reaper re-queued it after missing heartbeats): its work must not be recorded."""


def worker_id() -> str:
    """Who runs the job, for the operator: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


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


def start(job: Job) -> bool:
    """Claim a queued job: running, with a fresh heartbeat and one more attempt. False (and
    nothing changed) when it is not queued: already taken by another delivery of its task,
    ended, or cancelled."""
    claimed = (
        type(job)
        .objects.filter(pk=job.pk, status=JobStatus.QUEUED)
        .update(
            status=JobStatus.RUNNING,
            heartbeat_at=timezone.now(),
            worker=worker_id(),
            attempts=F("attempts") + 1,
            **job.running_fields(),
        )
    )
    job.refresh_from_db()
    return claimed > 0


def _current(job: Job) -> models.QuerySet:
    """The job's row while this worker still holds its claim (running, same attempt)."""
    return type(job).objects.filter(pk=job.pk, status=JobStatus.RUNNING, attempts=job.attempts)


def holds_claim(job: Job) -> bool:
    """Whether this worker still holds the job's claim (running, same attempt): work written in
    several transactions checks it before each one."""
    return _current(job).exists()


def finish(job: Job, **fields: Any) -> None:
    """Done, storing the job's results (``fields``) in the same write."""
    _update(job, status=JobStatus.DONE, finished_at=timezone.now(), **fields)


def finish_claimed(job: Job, **fields: Any) -> None:
    """Done, if this worker still holds the claim; else :class:`Superseded`. Called inside the
    transaction that writes the job's output, it makes the output and "done" one commit: the
    output of a worker whose job was handed to another one is rolled back."""
    if not _current(job).update(status=JobStatus.DONE, finished_at=timezone.now(), **fields):
        raise Superseded(f"{type(job).__name__} {job.pk} is no longer held by this worker")
    job.status, job.finished_at = JobStatus.DONE, timezone.now()
    for name, value in fields.items():
        setattr(job, name, value)


def fail(job: Job, message: str) -> bool:
    """Failed, with why. A job that already ended (done, failed, cancelled) keeps its outcome
    (and False is returned)."""
    return _update(
        job, only_pending=True, status=JobStatus.FAILED, finished_at=timezone.now(), **job.failure_fields(message)
    )


def cancel(job: Job, message: str = "cancelled") -> bool:
    """Cancelled, if still pending; False when the job had already ended (it keeps its outcome)."""
    return _update(
        job, only_pending=True, status=JobStatus.CANCELLED, finished_at=timezone.now(), **job.failure_fields(message)
    )


def _end_claimed(job: Job, **fields: Any) -> None:
    if _current(job).update(finished_at=timezone.now(), **fields):
        for name, value in fields.items():
            setattr(job, name, value)
    else:  # the reaper or a cancel got there first: the row keeps what they wrote
        job.refresh_from_db()


def run(job: J, work: Callable[[J], dict[str, Any]]) -> J:
    """Run ``work`` for a job on a worker (or inline): claim it, beat while working, then done
    with the columns it returns, or failed with the reason. A domain refusal keeps its message;
    anything else is logged and recorded with its type, so a researcher sees why and an
    operator finds it. A job that is not queued (a duplicate delivery, or one that ended) is
    returned unchanged; the outcome is written only while this worker holds the claim."""
    if not start(job):
        logger.info("%s %s is %s, not queued: nothing to run", type(job).__name__, job.pk, job.status)
        return job
    with Heartbeat(type(job), job.pk, attempt=job.attempts):
        try:
            results = work(job)
        except Superseded as exc:
            logger.warning("%s", exc)
            job.refresh_from_db()
        except Refused as exc:
            _end_claimed(job, status=JobStatus.FAILED, **exc.fields)
        except DomainError as exc:
            _end_claimed(job, status=JobStatus.FAILED, **job.failure_fields(exc.message))
        except Exception as exc:
            logger.exception("%s %s failed", type(job).__name__, job.pk)
            # the type and the full text are in the log; the job shows what a person may read
            _end_claimed(
                job,
                status=JobStatus.FAILED,
                **job.failure_fields(f"internal error: {public_text(exc)} (details in the server log)"),
            )
        else:
            if job.status == JobStatus.RUNNING:  # not already ended by finish_claimed
                _end_claimed(job, status=JobStatus.DONE, **results)
    return job


def send_or_fail(send: Callable[[], object], fail: Callable[[str], None]) -> bool:
    """Hand a task to the broker. If the broker cannot take it, record why (through ``fail``)
    instead of leaving the job queued for ever."""
    try:
        send()
    except Exception as exc:
        logger.exception("the task queue could not be reached")
        fail(
            f"the task queue could not be reached ({public_text(exc)}); "
            "check that the broker and a worker are running, then try again"
        )
        return False
    return True


# -- who sends a job to the broker: one sender per job type, declared by the app's tasks module
#
# The module that owns a job's Celery task (``<app>/tasks.py``) registers how a job of its type
# is handed to the broker; services (on commit) and the reaper (after a re-queue) both send
# through it. So a model never imports its task (the task module imports the models), and a
# job is sent by one code path whoever asks.


class NoSender(LookupError):
    """A job type for which no tasks module registered a sender: a programming error."""


@dataclass(frozen=True)
class Sender:
    """How a job of one type goes to the broker (``send``), and what to clean when the job is
    failed from outside its run (``cleanup``: the reaper gave up on it, or the broker refused
    it), which the run would have cleaned had it ended (e.g. an import's staged upload)."""

    send: Callable[[Any], object]
    cleanup: Callable[[Any], object] | None = None


_senders: dict[type, Sender] = {}


def _names(sender: Sender) -> tuple[str, ...]:
    return tuple(f"{fn.__module__}.{fn.__qualname__}" for fn in (sender.send, sender.cleanup) if fn is not None)


def register_sender(
    job_type: type[J], send: Callable[[J], object], *, cleanup: Callable[[J], object] | None = None
) -> None:
    """Declare how a job of ``job_type`` (and its subclasses) is sent: called once, by the tasks
    module that owns its task, with named functions. A second, different sender for the same
    type is refused (one sender per job); the same functions again (their module imported a
    second time) replace the first."""
    new = Sender(send, cleanup)
    existing = _senders.get(job_type)
    if existing is not None and _names(existing) != _names(new):
        raise ValueError(
            f"{job_type.__name__} is already sent by {_names(existing)[0]}, not also by {_names(new)[0]}: "
            "one sender per job"
        )
    _senders[job_type] = new


def _registered(job_type: type) -> Sender | None:
    return next((_senders[k] for k in job_type.__mro__ if k in _senders), None)


def sender_for(job_type: type) -> Sender:
    """The sender registered for ``job_type`` or the nearest of its bases. The first time a job
    model of an app is sent, that app's ``tasks`` module is imported (as Celery's autodiscovery
    does on a worker), so a web process registers the senders it needs when it first needs them
    without loading every task's services (numpy, pandas) at startup. :class:`NoSender` when
    none is registered after that."""
    found = _registered(job_type)
    meta = getattr(job_type, "_meta", None)
    if found is None and getattr(meta, "app_config", None) is not None:
        tasks = f"{meta.app_config.name}.tasks"
        try:
            importlib.import_module(tasks)
        except ModuleNotFoundError as exc:
            if exc.name != tasks:  # the tasks module exists but something it imports does not
                raise
        found = _registered(job_type)
    if found is None:
        raise NoSender(
            f"no sender is registered for {job_type.__name__}: its app's tasks module must call "
            "core.jobs.register_sender for it"
        )
    return found


def send(job: Job) -> None:
    """Hand ``job`` to the broker through its registered sender, now (the broker's error, if it
    refuses, is raised)."""
    sender_for(type(job)).send(job)


def clean_up(job: Job) -> None:
    """Run the cleanup registered for the job's type (after it was failed from outside its run:
    the reaper or a refusing broker). Nothing when none is registered."""
    try:
        found = sender_for(type(job))
    except NoSender:
        return
    if found.cleanup is not None:
        found.cleanup(job)


def send_or_fail_job(job: Job, *, reason: str = "") -> bool:
    """Send ``job`` through its sender; if the broker refuses, fail the job with why (after
    ``reason``, when given) and clean up after it."""
    sender = sender_for(type(job))

    def failed(message: str) -> None:
        if fail(job, f"{reason}; {message}" if reason else message):  # not if it had ended meanwhile
            clean_up(job)

    return send_or_fail(lambda: sender.send(job), failed)


def enqueue_on_commit(job: Job) -> None:
    """Hand the job to the broker through its registered sender once the current transaction
    commits; if the broker cannot take it, fail the job with the reason. The sender is looked up
    now, so a job type with none fails the request that creates it, not a callback later."""
    sender_for(type(job))
    transaction.on_commit(lambda: send_or_fail_job(job))
