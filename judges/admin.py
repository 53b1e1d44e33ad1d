from django.contrib import admin

from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun


@admin.register(JudgeConfig)
class JudgeConfigAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "backend", "model_id", "parser", "passes", "combine")
    list_filter = ("backend",)
    raw_id_fields = ("project", "rater")


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ("id", "config", "status", "total", "queue", "created_at", "finished_at")
    list_filter = ("status",)
    raw_id_fields = ("config", "project", "parent")
    exclude = ("item_ids",)


@admin.register(JudgeOutput)
class JudgeOutputAdmin(admin.ModelAdmin):
    list_display = ("run", "item", "pass_index", "error")
    raw_id_fields = ("run", "item", "member")


@admin.register(JudgeItemResult)
class JudgeItemResultAdmin(admin.ModelAdmin):
    list_display = ("run", "item", "status")
    raw_id_fields = ("run", "item")
