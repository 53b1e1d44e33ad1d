"""Celery interface of core: the periodic reaper of jobs whose worker died (``core.reaper``).
Not an installed app, so the worker imports this module through ``CELERY_IMPORTS``."""

from celery import shared_task

from . import reaper


@shared_task(name="core.reap_jobs", ignore_result=True)
def reap_jobs() -> dict[str, int]:
    """Re-queue or fail running jobs with no heartbeat for ``HV_JOB_LEASE_SECONDS``; beat runs
    this every ``HV_JOB_REAP_SECONDS`` (``CELERY_BEAT_SCHEDULE``)."""
    return reaper.reap()
