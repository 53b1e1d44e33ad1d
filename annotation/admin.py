from django.contrib import admin

from .models import Annotation, Asset, Assignment, ImportJob, Item, Membership, Project, Rater, RubricVersion


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
    list_display = ("external_id", "version", "project", "country", "region", "generator", "category", "dimension")
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
    list_display = ("id", "project", "item", "rater", "status", "purpose", "position")
    list_filter = ("status", "purpose", "project")
    raw_id_fields = ("item", "rater")


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "rater", "rubric_version", "revision", "updated_at")
    raw_id_fields = ("assignment", "item", "rater")


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "status", "original_name", "created_at", "finished_at")
