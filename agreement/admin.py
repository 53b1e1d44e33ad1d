from django.contrib import admin

from .models import AgreementReport


@admin.register(AgreementReport)
class AgreementReportAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "status", "progress", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = ("params", "data_signature", "result", "created_at", "finished_at")
