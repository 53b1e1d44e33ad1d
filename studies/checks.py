"""System checks of study settings (``manage.py check --deploy``)."""

from __future__ import annotations

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def crowd_pid_key(app_configs, **kwargs):
    """Crowd participant ids are hashed with HV_CROWD_PID_KEY; while it is empty SECRET_KEY is
    used, so rotating SECRET_KEY would give every returning participant a new account."""
    if getattr(settings, "HV_CROWD_PID_KEY", ""):
        return []
    return [
        checks.Warning(
            "HV_CROWD_PID_KEY is not set: crowd participant ids are hashed with SECRET_KEY.",
            hint="Set HV_CROWD_PID_KEY to a long random value; on a deployment that already has "
            "crowd participants, set it to the current SECRET_KEY (so they keep their accounts) "
            "before rotating SECRET_KEY.",
            id="studies.W001",
        )
    ]
