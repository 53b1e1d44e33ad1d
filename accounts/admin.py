from django.contrib import admin

from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("key_hash", "prefix", "created_at", "last_used_at")
    search_fields = ("user__username", "name", "prefix")
