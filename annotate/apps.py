from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    """The annotator loop: open, submit, skip, next, its pages, API and the lean path."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "annotate"
