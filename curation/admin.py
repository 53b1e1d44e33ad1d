from django.contrib import admin

from .models import AcceptancePolicy, DecisionEvent, Export, ItemDecision


@admin.register(AcceptancePolicy)
class AcceptancePolicyAdmin(admin.ModelAdmin):
    list_display = ("project", "rule", "aggregation", "judge_screening", "min_human_ratings", "updated_at")


@admin.register(ItemDecision)
class ItemDecisionAdmin(admin.ModelAdmin):
    list_display = ("item", "project", "status", "source", "decided_by", "decided_at")
    list_filter = ("status", "source")
    raw_id_fields = ("item", "project", "decided_by")


@admin.register(DecisionEvent)
class DecisionEventAdmin(admin.ModelAdmin):
    list_display = ("item", "previous_status", "status", "source", "user", "created_at")
    list_filter = ("source", "status")
    raw_id_fields = ("item", "project", "user")

    def has_change_permission(self, request, obj=None):  # the audit trail is append-only
        return False


@admin.register(Export)
class ExportAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "content", "format", "scope", "status", "progress", "created_at")
    list_filter = ("status", "content", "format")
