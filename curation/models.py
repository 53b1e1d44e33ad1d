"""Curation data: a project's acceptance policy, the decision on each item (with its audited
history), and exports (a background job with progress, its files with size, rows and sha256)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy

from core.jobs import Job

from . import export_formats

STATUS_CHOICES = [
    ("pending", gettext_lazy("Pending")),
    ("accepted", gettext_lazy("Accepted")),
    ("rejected", gettext_lazy("Rejected")),
    ("needs_revision", gettext_lazy("Needs revision")),
]
_STATUSES = Q(status__in=[s for s, _ in STATUS_CHOICES])


class AcceptancePolicy(models.Model):
    """The project's current policy (see ``curation/policy.py`` for the semantics)."""

    class Aggregation(models.TextChoices):
        ALL = "all", gettext_lazy("All raters pass")
        MAJORITY = "majority", gettext_lazy("Majority of raters pass")
        MEAN = "mean", gettext_lazy("Rule on the mean scores")
        DAWID_SKENE = "dawid_skene", gettext_lazy("Rule on the Dawid-Skene posterior labels")
        MACE = "mace", gettext_lazy("Rule on the MACE posterior labels")

    class Tie(models.TextChoices):
        REJECT = "reject", gettext_lazy("Reject")
        PENDING = "pending", gettext_lazy("Wait for another rating")

    project = models.OneToOneField("annotation.Project", on_delete=models.CASCADE, related_name="acceptance_policy")
    rule = models.CharField(
        max_length=1000, help_text="expression per rater, e.g. q1 + q2 >= 3 and q3 == 2 and q4 == 1"
    )
    aggregation = models.CharField(max_length=20, choices=Aggregation.choices, default=Aggregation.ALL)
    tie = models.CharField(max_length=10, choices=Tie.choices, default=Tie.REJECT)
    judge_screening = models.BooleanField(default=False, help_text="model raters must pass before humans count")
    min_human_ratings = models.PositiveSmallIntegerField(default=1)
    revise_if = models.CharField(
        max_length=1000, blank=True, help_text="a rejected item needs revision when any rating satisfies this"
    )
    element_filter = models.JSONField(
        default=dict,
        blank=True,
        help_text='optional, e.g. {"over": "values", "keep_if": "reflection == 1", '
        '"aggregation": "majority", "tie": "drop"}',
    )
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "acceptance policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(aggregation__in=["all", "majority", "mean", "dawid_skene", "mace"]),
                name="policy_aggregation_valid",
            ),
            models.CheckConstraint(condition=Q(tie__in=["reject", "pending"]), name="policy_tie_valid"),
        ]

    def spec_dict(self) -> dict:
        return {
            "rule": self.rule,
            "aggregation": self.aggregation,
            "tie": self.tie,
            "judge_screening": self.judge_screening,
            "min_human_ratings": self.min_human_ratings,
            "revise_if": self.revise_if,
            "element_filter": dict(self.element_filter or {}),
        }


class ItemDecision(models.Model):
    """The current decision on one item (one version). Automatic decisions come from applying the
    policy; a manual override (with a note) is kept by later applications unless asked otherwise."""

    class Source(models.TextChoices):
        POLICY = "policy", gettext_lazy("Policy")
        MANUAL = "manual", gettext_lazy("Manual override")

    item = models.OneToOneField("annotation.Item", on_delete=models.CASCADE, related_name="decision")
    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="item_decisions")
    status = models.CharField(max_length=16, choices=STATUS_CHOICES, default="pending")
    reason = models.TextField(blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.POLICY)
    details = models.JSONField(default=dict, blank=True)
    policy = models.JSONField(default=dict, blank=True, help_text="the policy the decision was made under")
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=_STATUSES, name="decision_status_valid"),
            models.CheckConstraint(condition=Q(source__in=["policy", "manual"]), name="decision_source_valid"),
            models.CheckConstraint(condition=Q(source="policy") | ~Q(note=""), name="manual_decision_has_note"),
        ]
        indexes = [models.Index(fields=["project", "status"], name="decision_project_status_idx")]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.status}"


class DecisionEvent(models.Model):
    """Audit history: one row per change of an item's decision (who, when, why). Never updated."""

    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="decision_events")
    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=STATUS_CHOICES)
    previous_status = models.CharField(max_length=16, blank=True)
    reason = models.TextField(blank=True)
    source = models.CharField(max_length=10, choices=ItemDecision.Source.choices)
    note = models.TextField(blank=True)
    policy = models.JSONField(default=dict, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["item", "created_at"], name="decision_event_item_idx")]


class Export(Job):
    """One export run: what was asked, progress, and the files written (name, size, rows, sha256)."""

    class Content(models.TextChoices):
        ITEMS = "items", gettext_lazy("Items")
        ANNOTATIONS = "annotations", gettext_lazy("Annotations (long format)")
        REVISIONS = "revisions", gettext_lazy("Items needing revision, with feedback")

    class Scope(models.TextChoices):
        ACCEPTED = "accepted", gettext_lazy("Accepted items")
        ALL = "all", gettext_lazy("All items")

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="exports")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    content = models.CharField(max_length=12, choices=Content.choices)
    # the registry's keys (curation/export_formats.py); a callable, so a new format is no migration,
    # and validated by clean() and the service rather than a constraint that would list them
    format = models.CharField(max_length=export_formats.KEY_MAX_LENGTH, choices=export_formats.choices)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.ACCEPTED)
    progress = models.FloatField(default=0.0)
    message = models.TextField(blank=True)
    files = models.JSONField(default=list, blank=True, help_text="[{name, size, rows, sha256}]")
    provenance = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]), name="export_status_valid"
            ),
            models.CheckConstraint(condition=Q(progress__gte=0) & Q(progress__lte=1), name="export_progress_range"),
            models.CheckConstraint(
                condition=Q(content__in=["items", "annotations", "revisions"]), name="export_content_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.content}, {self.format}) [{self.status}]"

    def clean(self) -> None:
        super().clean()
        why = export_formats.refusal(self.content, self.format)
        if why is not None:
            raise ValidationError({"format": why})

    def relative_dir(self) -> str:
        return f"exports/{self.project_id}/{self.pk}"
