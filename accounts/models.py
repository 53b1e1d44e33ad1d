"""Personal API tokens: what a script sends instead of a password.

A token is shown once, when it is made; the database keeps only its SHA-256 (a leaked database
gives no usable token) and its first characters, so a user can tell tokens apart. HTTP Basic
runs the password hasher on every request; a token costs one indexed lookup."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="what the token is for, e.g. 'nightly export script'")
    prefix = models.CharField(max_length=12, help_text="the token's first characters, shown to tell tokens apart")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token (the token is not stored)")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class Invitation(models.Model):
    """A one-time link that lets someone make an account (a username and password of their own)
    and join one project as an annotator, with profile attributes the researcher set and those
    the link asks for (``ask``: ``[{"attribute": "nationality", "choices": ["China", ...]}]``,
    no choices = free text). Like an API token, the link's secret is shown once and only its
    SHA-256 is kept; it expires, and it is spent by the account it made."""

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="invitations")
    label = models.CharField(max_length=100, blank=True, help_text="who it is for (shown to researchers only)")
    token_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the link's secret")
    attributes = models.JSONField(default=dict, blank=True, help_text="profile attributes set by the researcher")
    ask = models.JSONField(default=list, blank=True, help_text="profile attributes the invitee enters")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"invitation {self.pk} to project {self.project_id}"


class Preference(models.Model):
    """A user's own settings for the UI: kept apart from the rater's profile
    (``Rater.attributes``), which is data a study matches on and exports. The UI language is
    the one setting: chosen in the header's switcher, it follows the user to another browser
    (restored at log-in)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="preference"
    )
    ui_language = models.CharField(
        max_length=16, blank=True, help_text="the UI language the user chose (one of settings.LANGUAGES)"
    )

    def __str__(self) -> str:
        return f"preferences of user {self.user_id}"
