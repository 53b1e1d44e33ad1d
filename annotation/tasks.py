"""Celery interfaces: thin wrappers that call the service of the same name (and, for the
import jobs' models, the staged-upload cleanup they ask for when the reaper fails them)."""

from celery import shared_task

from .annotation_import import run_annotation_import_job
from .importing import run_import_job
from .models import AnnotationImport, ImportJob
from .staging import discard_job_upload
from .staging import sweep_staged_uploads as sweep


@shared_task(acks_late=True, name="annotation.run_import")
def run_import(job_id: int) -> str:
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status in (ImportJob.Status.DONE, ImportJob.Status.FAILED):
        return job.status  # redelivered after completion: nothing to do
    return run_import_job(job=job).status


@shared_task(acks_late=True, name="annotation.run_annotation_import")
def run_annotation_import(job_id: int) -> str:
    job = AnnotationImport.objects.select_related("project__rubric_version").get(pk=job_id)
    if job.status in (AnnotationImport.Status.DONE, AnnotationImport.Status.FAILED):
        return job.status  # redelivered after completion: nothing to do
    return run_annotation_import_job(job=job).status


__all__ = ["discard_job_upload", "run_annotation_import", "run_import"]


@shared_task(name="annotation.sweep_staged_uploads", ignore_result=True)
def sweep_staged_uploads() -> int:
    """Delete the staged uploads nobody imported (``staging.sweep_staged_uploads``); beat runs
    this hourly (``CELERY_BEAT_SCHEDULE``)."""
    return sweep()
