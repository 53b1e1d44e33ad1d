from django.apps import AppConfig


class CurationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "curation"
    verbose_name = "Curation: acceptance, revisions, exports"
