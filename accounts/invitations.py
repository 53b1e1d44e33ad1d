"""Annotator accounts without the Django admin (issue 14): a researcher of a project either makes
an account (username and password) for an annotator, or makes a one-time invitation link with
which the annotator picks their own username and password. Either way the new account joins the
project as an annotator, with profile attributes (e.g. nationality) the researcher sets and, for
a link, those the link asks the annotator for.

Secrets are never kept or shown again: an invitation's link is shown once, when it is made, and
only its SHA-256 is stored (as API tokens, :mod:`accounts.services`); a password goes only
through Django's hasher, after Django's password validators. A link expires, can be revoked,
and is spent by the account it makes (checked under a row lock, so it makes one account only)."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Membership, Project, Rater
from annotation.projects import add_member, rater_for_user
from core.errors import DomainError
from core.values import text_problem

from .models import Invitation
from .services import digest

#: links read ``/invite/inv_<43 url-safe characters>/`` (256 bits)
PREFIX = "inv_"
DEFAULT_DAYS = 7
MAX_DAYS = 30
#: open invitations a project may hold at once (each is a way in; revoke or let them expire)
MAX_OPEN = 200
#: profile keys a researcher may not set: the system's own (the crowd flag)
RESERVED_KEYS = frozenset({"crowd"})
KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,49}$")
MAX_VALUE = 100


# --------------------------------------------------------------------------- reading the forms
def _key(raw: str, where: str) -> str:
    key = raw.strip()
    if not KEY_RE.match(key):
        raise DomainError(
            _("%(where)s: %(key)r is not an attribute name (a letter, then letters, digits, _ . -; at most 50)")
            % {"where": where, "key": key}
        )
    if key in RESERVED_KEYS:
        raise DomainError(_("%(where)s: %(key)s is set by the system, not by hand") % {"where": where, "key": key})
    return key


def _value(raw: str, key: str) -> str:
    value = raw.strip()
    if not value:
        raise DomainError(_("give a value for %(key)s") % {"key": key})
    if len(value) > MAX_VALUE:
        raise DomainError(_("the value of %(key)s is longer than %(n)d characters") % {"key": key, "n": MAX_VALUE})
    problem = text_problem(value)  # what no stored value may hold (issue 37: lone surrogates)
    if problem:
        raise DomainError(f"{key}: {problem}")
    return value


def parse_attributes(text: str) -> dict[str, str]:
    """Profile attributes written one per line as ``key = value`` (``nationality = China``)."""
    found: dict[str, str] = {}
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise DomainError(_("attributes, line %(n)d: write key = value, e.g. nationality = China") % {"n": number})
        key = _key(key, _("attributes, line %(n)d") % {"n": number})
        if key in found:
            raise DomainError(_("attribute %(key)s is given twice") % {"key": key})
        found[key] = _value(value, key)
    return found


def parse_ask(text: str) -> list[dict[str, Any]]:
    """What an invitation asks the annotator, one attribute per line: ``nationality`` (free text)
    or ``nationality: China, Germany`` (one of these)."""
    asked: list[dict[str, Any]] = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        key, _sep, choices = line.partition(":")
        key = _key(key, _("asked attributes, line %(n)d") % {"n": number})
        if any(a["attribute"] == key for a in asked):
            raise DomainError(_("attribute %(key)s is asked twice") % {"key": key})
        options = [_value(c, key) for c in choices.split(",") if c.strip()]
        if len(set(options)) != len(options):
            raise DomainError(_("the choices of %(key)s repeat a value") % {"key": key})
        asked.append({"attribute": key, "choices": options})
    return asked


# --------------------------------------------------------------------------- accounts
def _validated_account(username: str, password: str, password_again: str) -> tuple[str, Any]:
    """The username and an unsaved user with the password set, or a refusal naming the field."""
    User = get_user_model()
    username = (username or "").strip()
    if not username:
        raise DomainError(_("give a username"), errors={"username": _("required")})
    try:
        User.username_validator(username)
        if len(username) > 150:
            raise ValidationError(_("at most 150 characters"))
    except ValidationError as exc:
        raise DomainError(
            _("that username cannot be used: %(why)s") % {"why": " ".join(exc.messages)},
            errors={"username": " ".join(exc.messages)},
        ) from None
    if User.objects.filter(username__iexact=username).exists():
        raise DomainError(_("the username %(name)s is taken") % {"name": username}, errors={"username": _("taken")})
    if password != password_again:
        raise DomainError(_("the two passwords differ"), errors={"password2": _("the two passwords differ")})
    user = User(username=username)
    try:
        password_validation.validate_password(password, user=user)
    except ValidationError as exc:
        raise DomainError(
            _("choose another password: %(why)s") % {"why": " ".join(exc.messages)},
            errors={"password1": " ".join(exc.messages)},
        ) from None
    user.set_password(password)
    return username, user


def _join(*, project: Project, user: AbstractBaseUser, attributes: dict[str, str]) -> None:
    """The new account's profile and membership (the caller's transaction)."""
    rater = rater_for_user(user)
    if attributes:
        rater.attributes = {**rater.attributes, **attributes}
        rater.save(update_fields=["attributes"])
    # after the profile: a project that assigns new members at once matches on these attributes
    add_member(project=project, user=user, role=Membership.Role.ANNOTATOR)


def create_annotator_account(
    *, project: Project, username: str, password: str, password_again: str, attributes: dict[str, str]
) -> AbstractBaseUser:
    """An account made by a researcher, joined to ``project`` as an annotator with ``attributes``."""
    username, user = _validated_account(username, password, password_again)
    try:
        with transaction.atomic():
            user.save()
            _join(project=project, user=user, attributes=attributes)
    except IntegrityError:  # the same username made a moment ago
        raise DomainError(_("the username %(name)s is taken") % {"name": username}) from None
    return user


# --------------------------------------------------------------------------- invitations
@dataclass(frozen=True)
class NewInvitation:
    invitation: Invitation
    token: str  # the link's secret: shown once, never stored


def create_invitation(
    *,
    project: Project,
    created_by: AbstractBaseUser | None,
    label: str = "",
    attributes: dict[str, str] | None = None,
    ask: list[dict[str, Any]] | None = None,
    days: int = DEFAULT_DAYS,
) -> NewInvitation:
    """A one-time link to ``project`` valid for ``days``; the token in the result is the only copy."""
    attributes, ask = dict(attributes or {}), list(ask or [])
    label = (label or "").strip()
    if len(label) > 100:
        raise DomainError(_("the label is longer than 100 characters"))
    if not 1 <= int(days) <= MAX_DAYS:
        raise DomainError(_("an invitation is valid for 1 to %(n)d days") % {"n": MAX_DAYS})
    both = sorted({a["attribute"] for a in ask} & set(attributes))
    if both:
        raise DomainError(_("%(keys)s is both set and asked: set it, or ask the annotator") % {"keys": ", ".join(both)})
    now = timezone.now()
    if (
        Invitation.objects.filter(
            project=project, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
        ).count()
        >= MAX_OPEN
    ):
        raise DomainError(_("this project has %(n)d open invitations; revoke some first") % {"n": MAX_OPEN})
    token = PREFIX + secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        project=project,
        label=label,
        token_hash=digest(token),
        attributes=attributes,
        ask=ask,
        created_by=created_by if created_by is not None and created_by.is_authenticated else None,
        expires_at=now + timedelta(days=int(days)),
    )
    return NewInvitation(invitation=invitation, token=token)


def project_annotators(project: Project) -> QuerySet[Rater]:
    """The project's annotators as raters (their profile attributes), by username."""
    return (
        Rater.objects.filter(user__memberships__project=project, user__memberships__role=Membership.Role.ANNOTATOR)
        .select_related("user")
        .distinct()
        .order_by("user__username")
    )


def project_invitations(project: Project) -> QuerySet[Invitation]:
    """The project's invitations, newest first (``state`` says whether each can still be used)."""
    return Invitation.objects.filter(project=project).order_by("-created_at", "-id")


def state(invitation: Invitation) -> str:
    """``open``, ``used``, ``revoked`` or ``expired``."""
    if invitation.used_at is not None:
        return "used"
    if invitation.revoked_at is not None:
        return "revoked"
    if invitation.expires_at <= timezone.now():
        return "expired"
    return "open"


def revoke_invitation(*, project: Project, invitation_id: int) -> Invitation:
    """Revoke an unused invitation of ``project`` (another project's is "not found")."""
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().filter(project=project, pk=invitation_id).first()
        if invitation is None:
            raise DomainError(_("no such invitation"), code="not_found")
        if invitation.used_at is not None:
            raise DomainError(_("this invitation was already used"), code="conflict")
        if invitation.revoked_at is None:
            invitation.revoked_at = timezone.now()
            invitation.save(update_fields=["revoked_at"])
    return invitation


def find_invitation(token: str) -> Invitation | None:
    """The invitation of a link's secret (any state), or None."""
    if not token.startswith(PREFIX) or len(token) > 100:
        return None
    return Invitation.objects.select_related("project").filter(token_hash=digest(token)).first()


def refusal(invitation: Invitation) -> DomainError | None:
    """Why the link cannot be used any more, or None while it is open."""
    why = state(invitation)
    if why == "open":
        return None
    messages = {
        "used": _("This invitation link was already used: each link makes one account. Log in instead."),
        "revoked": _("This invitation link was withdrawn. Ask the researcher for a new one."),
        "expired": _("This invitation link has expired. Ask the researcher for a new one."),
    }
    return DomainError(messages[why], code="conflict")


def clean_answers(invitation: Invitation, answers: dict[str, str]) -> dict[str, str]:
    """The invitee's answers to what the link asks, checked against its choices."""
    clean: dict[str, str] = {}
    errors: dict[str, str] = {}
    for asked in invitation.ask:
        key = asked["attribute"]
        value = (answers.get(key) or "").strip()
        if not value:
            errors[key] = _("please answer")
        elif asked.get("choices") and value not in asked["choices"]:
            errors[key] = _("choose one of the options")
        elif len(value) > MAX_VALUE:
            errors[key] = _("at most %(n)d characters") % {"n": MAX_VALUE}
        else:
            clean[key] = value
    if errors:
        raise DomainError(_("please answer the questions about you"), errors=errors)
    return clean


def accept_invitation(
    *, token: str, username: str, password: str, password_again: str, answers: dict[str, str]
) -> AbstractBaseUser:
    """Spend the link: a new account with the chosen username and password, in the link's project
    as an annotator, with the researcher's attributes and the answers. In one transaction, with
    the invitation row locked, so a link makes one account even when sent twice at once."""
    found = find_invitation(token)
    if found is None:
        raise DomainError(_("no such invitation link"), code="not_found")
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().select_related("project").get(pk=found.pk)
        problem = refusal(invitation)
        if problem is not None:
            raise problem
        clean = clean_answers(invitation, answers)
        username, user = _validated_account(username, password, password_again)
        try:
            with transaction.atomic():  # a savepoint: a taken username leaves the link unspent
                user.save()
        except IntegrityError:
            raise DomainError(_("the username %(name)s is taken") % {"name": username}) from None
        # the researcher's attributes win over answers (the two never share a key anyway)
        _join(project=invitation.project, user=user, attributes={**clean, **invitation.attributes})
        invitation.used_at = timezone.now()
        invitation.used_by = user
        invitation.save(update_fields=["used_at", "used_by"])
    return user
