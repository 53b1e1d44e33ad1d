"""Celery interfaces: thin wrappers that call the service of the same name."""

from celery import shared_task

from .models import ImportJob
from .services import run_import_job


@shared_task(acks_late=True, name="annotation.run_import")
def run_import(job_id: int) -> str:
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status in (ImportJob.Status.DONE, ImportJob.Status.FAILED):
        return job.status  # redelivered after completion: nothing to do
    return run_import_job(job=job).status


@shared_task(name="annotation.expire_leases")
def expire_leases() -> int:
    """Return expired pool holds to the pool (claims also reclaim them lazily; schedule this
    with Celery beat, e.g. every minute, to keep the dashboard's counts current)."""
    from .plans import expire_leases as expire

    return expire()
