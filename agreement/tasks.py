"""Celery interface: a thin wrapper that calls the service of the same name, and the sender of
the report job (``core.jobs.register_sender``), used on commit and by the reaper."""

from celery import shared_task

from core import jobs

from .models import AgreementReport
from .services import run_report_job


@shared_task(acks_late=True, name="agreement.run_agreement_report")
def run_agreement_report(report_id: int) -> str:
    job = AgreementReport.objects.select_related("project__rubric_version").get(pk=report_id)
    if job.status in (AgreementReport.Status.DONE, AgreementReport.Status.FAILED):
        return job.status  # redelivered after completion: nothing to do
    return run_report_job(job=job).status


def send_report(job: AgreementReport) -> None:
    # also the reaper's re-queue: a report resumes from the start, computed again from the ratings
    run_agreement_report.delay(job.pk)


jobs.register_sender(AgreementReport, send_report)
