"""The study design's tables in the Django admin (samples, plans, pool slots, crowd studies)."""

from django.contrib import admin

from .models import AssignmentPlan, CrowdParticipant, CrowdStudy, PoolSlot, Sample, SampleItem


@admin.register(Sample)
class SampleAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "strata_keys", "allocation", "total_size", "per_stratum", "seed", "created_at")
    list_filter = ("project",)
    readonly_fields = ("report",)


@admin.register(SampleItem)
class SampleItemAdmin(admin.ModelAdmin):
    list_display = ("id", "sample", "item", "stratum")
    list_filter = ("sample",)
    raw_id_fields = ("item", "sample")


@admin.register(AssignmentPlan)
class AssignmentPlanAdmin(admin.ModelAdmin):
    """Plans are created from a sample's page (Study design); reassignments by hand on the plan's page."""

    list_display = ("name", "project", "mode", "status", "k", "cap_per_annotator", "lease_seconds", "created_at")
    list_filter = ("mode", "status", "project")
    raw_id_fields = ("sample",)
    readonly_fields = ("report",)


@admin.register(PoolSlot)
class PoolSlotAdmin(admin.ModelAdmin):
    list_display = ("id", "plan", "item", "requires", "state", "rater", "lease_expires_at")
    list_filter = ("state", "plan")
    raw_id_fields = ("item", "rater", "assignment", "plan")


@admin.register(CrowdStudy)
class CrowdStudyAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "items_per_participant", "completion_code", "active", "created_at")
    readonly_fields = ("token",)


@admin.register(CrowdParticipant)
class CrowdParticipantAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "rater", "eligible", "completed_at", "created_at")
    readonly_fields = ("pid_hash",)
    raw_id_fields = ("rater",)
