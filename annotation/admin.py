from django.contrib import admin

from benchmarks.base import STRATA_KEYS

from .models import (
    Annotation,
    AnnotationImport,
    AnnotationRevision,
    Asset,
    Assignment,
    ImportJob,
    Item,
    Membership,
    Project,
    Rater,
    RubricVersion,
)


@admin.register(RubricVersion)
class RubricVersionAdmin(admin.ModelAdmin):
    list_display = ("rubric_key", "version", "schema_hash", "created_at")
    readonly_fields = ("schema_hash", "created_at")


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "preset_key", "status", "k_per_item", "created_at")
    list_filter = ("status", "preset_key")
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("project", "user", "role")
    list_filter = ("role",)


@admin.register(Asset)
class AssetAdmin(admin.ModelAdmin):
    list_display = ("sha256", "format", "width", "height", "size_bytes")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "version", "project", *STRATA_KEYS)
    list_filter = ("project", "region", "generator", "dimension")
    search_fields = ("external_id",)
    raw_id_fields = ("parent",)
    filter_horizontal = ("assets",)


@admin.register(Rater)
class RaterAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "user", "backend", "model_id")
    list_filter = ("kind",)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "item", "rater", "status", "purpose", "plan", "position", "lease_expires_at")
    list_filter = ("status", "purpose", "project")
    raw_id_fields = ("item", "rater", "plan")
    search_fields = ("item__external_id", "rater__name")


class _ReadOnly:
    """Nothing added, changed or deleted from the admin: answers and their history are the
    annotators' own (``annotate.annotating``, ``annotation.history``)."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class AnnotationRevisionInline(_ReadOnly, admin.TabularInline):
    model = AnnotationRevision
    extra = 0
    fields = ("revision", "answers", "rubric_version", "duration_ms", "answered_at", "edited_at", "edited_by")
    readonly_fields = fields


@admin.register(AnnotationRevision)
class AnnotationRevisionAdmin(_ReadOnly, admin.ModelAdmin):
    """The answers edits replaced, read-only."""

    list_display = ("id", "annotation", "revision", "duration_ms", "answered_at", "edited_at", "edited_by")
    raw_id_fields = ("annotation", "edited_by")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    """Read-only: an answer is the annotator's, validated against the rubric when submitted
    (``annotate.annotating``) and kept with its revisions; the admin may look, not rewrite."""

    list_display = ("id", "item", "rater", "rubric_version", "revision", "updated_at")
    raw_id_fields = ("assignment", "item", "rater")
    inlines = [AnnotationRevisionInline]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "status", "original_name", "created_at", "finished_at")


@admin.register(AnnotationImport)
class AnnotationImportAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "status", "data_format", "original_name", "sha256", "created_at", "finished_at")
    list_filter = ("status", "data_format")
    readonly_fields = ("sha256", "report", "created_at", "finished_at")
