"""The tables study design keeps: stratified samples, assignment plans, the pool's slots and
crowd (Prolific) studies. They were declared in ``annotation.models`` until issue 21 and keep
their tables (``db_table``): the move changed Django's state only (``studies/migrations/0001``,
``annotation/migrations/0008``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Assignment, Item, Project, Rater


# --------------------------------------------------------------------------- sampling & plans
class Sample(models.Model):
    """A stratified draw of a project's items: the parameters it was drawn with (the same seed
    gives the same items) and, per stratum, how many were available, asked and drawn."""

    class Allocation(models.TextChoices):
        EQUAL = "equal", _("Equal per stratum")
        PROPORTIONAL = "proportional", _("Proportional to stratum size")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="samples")
    name = models.CharField(max_length=200)
    strata_keys = models.JSONField(default=list, blank=True, help_text="item columns or meta keys")
    allocation = models.CharField(max_length=12, choices=Allocation.choices, default=Allocation.EQUAL)
    total_size = models.PositiveIntegerField(null=True, blank=True)
    per_stratum = models.PositiveIntegerField(null=True, blank=True)
    seed = models.BigIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True, help_text="per-stratum available / asked / drawn")
    # {} for a stratified sample; an active sample (``studies/active.py``) keeps how it was drawn:
    # {"kind": "active", "series", "round", "rounds", "judge", "field", "uncertainty", "budget",
    #  "tau", "floor", "seed", "population": {"items": [...], "pi": [...]}}
    design = models.JSONField(default=dict, blank=True, help_text="how an active sample was drawn")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    items = models.ManyToManyField(Item, through="SampleItem", related_name="samples")

    class Meta:
        db_table = "annotation_sample"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(allocation__in=["equal", "proportional"]), name="sample_allocation_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class SampleItem(models.Model):
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="members")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    stratum = models.CharField(max_length=300, blank=True)
    # active samples only: the probability the item was drawn with, and the round that drew it
    pi = models.FloatField(null=True, blank=True)
    round = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        db_table = "annotation_sampleitem"
        constraints = [models.UniqueConstraint(fields=["sample", "item"], name="uniq_sample_item")]
        indexes = [models.Index(fields=["sample", "stratum"], name="sampleitem_stratum_idx")]


class AssignmentPlan(models.Model):
    """How a sample is handed to annotators: k per item, who is eligible for which item, how
    many of each group per item (balance), caps, and either pre-assigned rows or a pool that
    annotators draw from with leases (:class:`PoolSlot`)."""

    class Mode(models.TextChoices):
        PREASSIGNED = "preassigned", _("Pre-assigned rows")
        POOLED = "pooled", _("Pooled (annotators draw the next item, with leases)")

    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        CLOSED = "closed", _("Closed")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="plans")
    sample = models.ForeignKey(Sample, on_delete=models.PROTECT, related_name="plans")
    name = models.CharField(max_length=200)
    mode = models.CharField(max_length=12, choices=Mode.choices, default=Mode.POOLED)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    k = models.PositiveSmallIntegerField(default=2)
    # [{"attribute": "nationality", "item_key": "country"}]: rater.attributes[attribute] == item[item_key]
    eligibility = models.JSONField(default=list, blank=True)
    # {"attribute": "nationality", "quota": {"China": 2, "Germany": 2}}: per item, that many of each
    balance = models.JSONField(default=dict, blank=True)
    cap_per_annotator = models.PositiveIntegerField(null=True, blank=True)
    lease_seconds = models.PositiveIntegerField(null=True, blank=True, help_text="empty = HV_LEASE_SECONDS")
    seed = models.BigIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_assignmentplan"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(mode__in=["preassigned", "pooled"]), name="plan_mode_valid"),
            models.CheckConstraint(condition=Q(status__in=["active", "closed"]), name="plan_status_valid"),
            models.CheckConstraint(condition=Q(k__gte=1), name="plan_k_positive"),
        ]

    def __str__(self) -> str:
        return self.name


class PoolSlot(models.Model):
    """One of the k places of an item in a pooled plan. An annotator asking for work claims an
    open slot (or one whose lease ran out) with ``FOR UPDATE SKIP LOCKED``; a submitted slot is
    final. k slots per item is what bounds an item to k submissions. ``requires`` is the
    canonical "attr=value&..." an annotator must match (eligibility and balance), "" for anyone."""

    class State(models.TextChoices):
        OPEN = "open", _("Open")
        LEASED = "leased", _("Leased")
        SUBMITTED = "submitted", _("Submitted")

    plan = models.ForeignKey(AssignmentPlan, on_delete=models.CASCADE, related_name="slots")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    requires = models.CharField(max_length=300, blank=True)
    order_key = models.BigIntegerField(default=0, help_text="seeded random order in which the pool is served")
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    rater = models.ForeignKey(Rater, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="slot")
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_poolslot"
        constraints = [
            models.CheckConstraint(condition=Q(state__in=["open", "leased", "submitted"]), name="slot_state_valid"),
            models.CheckConstraint(
                condition=Q(state="open") | Q(assignment__isnull=False), name="slot_taken_has_assignment"
            ),
        ]
        indexes = [
            models.Index(fields=["plan", "state", "requires", "order_key"], name="slot_pool_idx"),
            models.Index(fields=["plan", "state", "lease_expires_at"], name="slot_lease_idx"),
            models.Index(fields=["item"], name="slot_item_idx"),
        ]


# --------------------------------------------------------------------------- crowd entry
class CrowdStudy(models.Model):
    """A Prolific study: a secret link token that lets participants in as pseudonymous
    annotators of one project, optional pre-screen questions, and the completion code."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="studies")
    name = models.CharField(max_length=200)
    token = models.CharField(max_length=64, unique=True)
    completion_code = models.CharField(max_length=64)
    items_per_participant = models.PositiveIntegerField(default=10)
    # [{"attribute": "nationality", "label": "Your nationality", "choices": ["China", "Germany"]}]
    prescreen = models.JSONField(default=list, blank=True)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_crowdstudy"

    def __str__(self) -> str:
        return self.name


class CrowdParticipant(models.Model):
    """A participant, known only by a keyed hash of their PROLIFIC_PID (plus the study and
    session ids Prolific gives, which are themselves pseudonymous)."""

    study = models.ForeignKey(CrowdStudy, on_delete=models.CASCADE, related_name="participants")
    pid_hash = models.CharField(max_length=64)
    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="crowd_entries")
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    prescreen_answers = models.JSONField(default=dict, blank=True)
    eligible = models.BooleanField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_crowdparticipant"
        constraints = [models.UniqueConstraint(fields=["study", "pid_hash"], name="uniq_study_participant")]
