"""Jobs whose worker died: found by their lease, then re-queued or failed with the reason.

A running job beats ``heartbeat_at`` every few seconds (``core.heartbeat``). When a job has
been running with no beat for ``HV_JOB_LEASE_SECONDS`` its worker is gone (killed, out of
memory, the machine lost), and whatever the broker does about the task it held:

- the filesystem broker (the embedded default) removes a message as soon as a worker reads it:
  it has no acknowledgements, so the task of a killed worker is simply gone;
- Redis with ``acks_late`` + ``reject_on_worker_lost`` hands an unacknowledged task out again,
  but only after its ``visibility_timeout`` (15 minutes by default), and a redelivered task
  finds its job running, which it leaves alone (only a queued job is claimed, ``jobs.start``);

so this module decides. A job that can be resumed safely (``Job.resume_blocker()`` is None) and
has attempts left (``HV_JOB_MAX_ATTEMPTS`` starts in all) is handed to a worker again
(``Job.requeue_fields()``, then the sender its app's tasks module registered, ``core.jobs``):
an import from its staged file (it wrote nothing, its rows commit with "done"), an export or a
report from the start, a judge run with only its missing outputs. Any other is failed with
"the worker stopped: no heartbeat since ...", and what its run would have cleaned up (an
import's staged upload) is cleaned by the cleanup registered with its sender.
A queued job that no worker claims for ``HV_JOB_RESEND_SECONDS`` has its task sent again (its
message may have left with a killed worker before the claim); a duplicate is harmless.

It runs from Celery beat every ``HV_JOB_REAP_SECONDS`` (``core.tasks.reap_jobs``) and when a
job's page or API is read (:func:`check`), so a job is never shown as running for ever even
when no beat runs. Every write is conditional on the row still being the stale one it read, so
two reapers (beat and a page view) never both act."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, models, transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from . import jobs
from .heartbeat import lease_seconds
from .jobs import Job, JobStatus

logger = logging.getLogger(__name__)

REQUEUED, FAILED, RESENT = "requeued", "failed", "resent"


def max_attempts() -> int:
    return max(1, int(settings.HV_JOB_MAX_ATTEMPTS))


def job_models() -> list[type[Job]]:
    """Every concrete job model of the project."""
    return [m for m in apps.get_models() if issubclass(m, Job)]


def _cutoff(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(seconds=lease_seconds())


def stale(model: type[Job], now: datetime | None = None) -> models.QuerySet:
    """Running jobs of ``model`` whose lease ran out. A row with no heartbeat at all (started
    before heartbeats existed) counts from its creation."""
    return (
        model.objects.filter(status=JobStatus.RUNNING)
        .alias(last_beat=Coalesce("heartbeat_at", "created_at"))
        .filter(last_beat__lt=_cutoff(now))
        .order_by("pk")
    )


def is_stale(job: Job, now: datetime | None = None) -> bool:
    return job.status == JobStatus.RUNNING and (job.heartbeat_at or job.created_at) < _cutoff(now)


def lost_reason(job: Job) -> str:
    last = timezone.localtime(job.heartbeat_at or job.created_at)
    who = f" (worker {job.worker})" if job.worker else ""
    return f"the worker stopped: no heartbeat since {last:%Y-%m-%d %H:%M:%S %Z}{who}"


def reap_job(job: Job) -> str | None:
    """Re-queue or fail one stale job; None when it was not stale any more (it beat, ended, or
    another reaper acted first)."""
    now = timezone.now()
    if not is_stale(job, now):
        return None
    model = type(job)
    jobs.sender_for(model)  # a job type nobody can send is an error before anything is written
    # the row exactly as read: any beat, end or other reaper since then makes this a no-op
    same = model.objects.filter(pk=job.pk, status=JobStatus.RUNNING, attempts=job.attempts)
    same = same.filter(heartbeat_at=job.heartbeat_at) if job.heartbeat_at else same.filter(heartbeat_at__isnull=True)
    reason = lost_reason(job)
    blocker = job.resume_blocker()
    if blocker is None and job.attempts >= max_attempts():
        blocker = f"gave up after {job.attempts} attempts"
    if blocker is not None:
        message = f"{reason}; {blocker}"
        if not same.update(status=JobStatus.FAILED, finished_at=now, **job.failure_fields(message)):
            return None
        logger.warning("%s %s failed: %s", model.__name__, job.pk, message)
        job.refresh_from_db()
        jobs.clean_up(job)
        return FAILED
    with transaction.atomic():
        if not same.update(heartbeat_at=now, worker="", **job.requeue_fields()):
            return None
        job.refresh_from_db()
        logger.warning("%s %s re-queued (attempt %s done): %s", model.__name__, job.pk, job.attempts, reason)
        # sent once the re-queue is committed, so the worker finds the job queued
        transaction.on_commit(lambda: jobs.send_or_fail_job(job, reason=reason))
    return REQUEUED


def unclaimed(model: type[Job], now: datetime | None = None) -> models.QuerySet:
    """Queued jobs of ``model`` that no worker has claimed for ``HV_JOB_RESEND_SECONDS`` since
    they were queued or last sent (``heartbeat_at`` of a queued job: when it was last sent)."""
    cutoff = (now or timezone.now()) - timedelta(seconds=float(settings.HV_JOB_RESEND_SECONDS))
    return (
        model.objects.filter(status=JobStatus.QUEUED)
        .alias(last_sent=Coalesce("heartbeat_at", "created_at"))
        .filter(last_sent__lt=cutoff)
        .order_by("pk")
    )


def resend_job(job: Job) -> str | None:
    """Send a long-unclaimed queued job's task again. Its message may be gone: on the filesystem
    broker a worker killed after reading it and before claiming the job took it along. A
    duplicate delivery is harmless (only a queued job is claimed, once), so this only costs a
    message; each job is re-sent at most once per ``HV_JOB_RESEND_SECONDS``."""
    model = type(job)
    jobs.sender_for(model)  # a job type nobody can send is an error before anything is written
    same = model.objects.filter(pk=job.pk, status=JobStatus.QUEUED)
    same = same.filter(heartbeat_at=job.heartbeat_at) if job.heartbeat_at else same.filter(heartbeat_at__isnull=True)
    with transaction.atomic():
        if not same.update(heartbeat_at=timezone.now()):
            return None  # claimed, ended or re-sent meanwhile
        logger.warning("%s %s still unclaimed: its task is sent again", model.__name__, job.pk)
        transaction.on_commit(lambda: jobs.send_or_fail_job(job))
    return RESENT


def reap(now: datetime | None = None, limit: int = 100) -> dict[str, int]:
    """Act on every stale job and re-send every long-unclaimed queued one (at most ``limit``
    per model and kind per call). Returns counts."""
    counts = {REQUEUED: 0, FAILED: 0, RESENT: 0}
    for model in job_models():
        for finder, act in ((stale, reap_job), (unclaimed, resend_job)):
            for job in finder(model, now)[:limit]:
                try:
                    outcome = act(job)
                except DatabaseError:  # e.g. SQLite busy with a long write: the next round retries
                    logger.warning("could not reap %s %s", model.__name__, job.pk, exc_info=True)
                    continue
                if outcome:
                    counts[outcome] += 1
    return counts


def check(job: Job) -> Job:
    """For a job's page or API: reap it now if its lease ran out, so what is shown is true.
    Never fails the read: a database too busy to write leaves it to the periodic reaper."""
    if is_stale(job):
        try:
            reap_job(job)
        except DatabaseError:
            logger.warning("could not reap %s %s on read", type(job).__name__, job.pk, exc_info=True)
    return job
