"""Celery interfaces: thin wrappers that call the service of the same name."""

from celery import shared_task

from . import pool


@shared_task(name="studies.expire_leases")
def expire_leases() -> int:
    """Return expired pool holds to the pool (claims also reclaim them lazily); beat runs this
    every minute (``CELERY_BEAT_SCHEDULE``) so the dashboard's counts stay current."""
    return pool.expire_leases()
