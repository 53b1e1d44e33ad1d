"""Stored agreement reports: one row per report computed (inline or on a worker), keyed by its
parameters and the fingerprint of the data it was computed from (``data_signature``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.jobs import Job


class AgreementReport(Job):
    """One agreement report (parameters, progress, result JSON): a small project's first report is
    computed in the request and stored done; the others run on a Celery worker and the page
    polls this row. Superseded done reports of the same parameters are deleted."""

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="agreement_reports")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    params = models.JSONField(default=dict)
    # what the report was computed from (agreement.selectors.report_fingerprint): a stored report
    # is served as current only while this still matches
    data_signature = models.CharField(max_length=200, blank=True)
    progress = models.FloatField(default=0.0)
    message = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]), name="agreement_report_status_valid"
            ),
            models.CheckConstraint(condition=Q(progress__gte=0) & Q(progress__lte=1), name="agreement_report_progress"),
        ]
        indexes = [models.Index(fields=["project", "data_signature"], name="agreement_report_lookup_idx")]

    def __str__(self) -> str:
        return f"agreement report {self.pk} of {self.project_id} [{self.status}]"
