from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "studies"
    verbose_name = "Study design"

    def ready(self) -> None:
        from . import checks  # noqa: F401 - registers the system checks
