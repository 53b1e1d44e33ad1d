from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo data of `make run`: above every other room, as it fills them all."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "demo"
