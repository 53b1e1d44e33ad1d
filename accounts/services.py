"""Making, revoking and checking personal API tokens (see :mod:`accounts.models`)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Rater
from core.errors import DomainError

from .models import ApiToken

#: tokens read ``hv_<43 url-safe characters>`` (256 bits); the prefix tells them apart in logs
PREFIX = "hv_"
MAX_ACTIVE = 20
#: last use is written at most this often per token (a script's every request is no write)
TOUCH_EVERY = timedelta(minutes=1)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_token(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``; returns the row and the token itself, which is never shown
    again."""
    name = (name or "").strip()
    if not name:
        raise DomainError(_("give the token a name (what it is for)"))
    if len(name) > 100:
        raise DomainError(_("the name is longer than 100 characters"))
    if ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() >= MAX_ACTIVE:
        raise DomainError(_("you have %(n)d active tokens; revoke one first") % {"n": MAX_ACTIVE})
    key = PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=key[:10], key_hash=digest(key))
    return token, key


def revoke_token(*, user: AbstractBaseUser, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s own tokens (someone else's is "not found")."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise DomainError(_("no such token"), code="not_found")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def user_for_key(key: str) -> AbstractBaseUser | None:
    """The active user of an active token, or None."""
    if not key.startswith(PREFIX):
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=digest(key), revoked_at__isnull=True).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


# --------------------------------------------------------------------------- UI language
#: the profile key of an annotator's chosen UI language (``Rater.attributes``, the one profile a
#: person has); a key no eligibility rule or pre-screen is expected to name
LANGUAGE_KEY = "ui_language"


def remember_language(*, user: AbstractBaseUser, code: str) -> bool:
    """Keep ``code`` (one of ``settings.LANGUAGES``) as the user's UI language in their profile,
    so that it follows them to another browser (:func:`preferred_language` at log-in). Users
    without a profile (researchers who never annotate) keep only the browser's cookie; returns
    whether it was kept."""
    if code not in dict(settings.LANGUAGES):
        raise DomainError(f"unknown language {code!r}")
    with transaction.atomic():
        rater = Rater.objects.select_for_update().filter(user=user).first()
        if rater is None:
            return False
        if rater.attributes.get(LANGUAGE_KEY) != code:
            rater.attributes = {**rater.attributes, LANGUAGE_KEY: code}
            rater.save(update_fields=["attributes"])
    return True


def preferred_language(user: AbstractBaseUser) -> str | None:
    """The UI language kept in the user's profile, when it is still one of ``settings.LANGUAGES``."""
    attributes = Rater.objects.filter(user=user).values_list("attributes", flat=True).first() or {}
    code = attributes.get(LANGUAGE_KEY) if isinstance(attributes, dict) else None
    return code if code in dict(settings.LANGUAGES) else None
