"""Making, revoking and checking personal API tokens, and keeping a user's UI language (see
:mod:`accounts.models`)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from django.utils.translation import gettext as _

from core.errors import DomainError

from .models import ApiToken, Preference

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
def remember_language(*, user: AbstractBaseUser, code: str) -> None:
    """Keep ``code`` (one of ``settings.LANGUAGES``) as the user's UI language, so that it
    follows them to another browser (:func:`preferred_language` at log-in). It is a preference
    of the account (:class:`accounts.models.Preference`), not a profile attribute: rules do not
    match on it and exports do not carry it."""
    if code not in dict(settings.LANGUAGES):
        raise DomainError(f"unknown language {code!r}")
    Preference.objects.update_or_create(user=user, defaults={"ui_language": code})


def preferred_language(user: AbstractBaseUser) -> str | None:
    """The UI language the user chose, when it is still one of ``settings.LANGUAGES``."""
    code = Preference.objects.filter(user=user).values_list("ui_language", flat=True).first()
    return code if code in dict(settings.LANGUAGES) else None
