"""Personal API tokens as a DRF authentication class: ``Authorization: Token <key>`` or
``Bearer <key>``. It lives here, beside the tokens it reads, because ``core`` imports no app;
the failed-attempt throttle it shares with the log-in form stays in :mod:`core.security`."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from core.security import THROTTLED_MESSAGE, TOKEN_KEYWORDS, token_blocked, token_failed

from .services import user_for_key


class TokenAuthentication(authentication.BaseAuthentication):
    """A wrong token is a 401, counted like a failed log-in from its address (429 once the
    address has used up its failures); a valid token is always accepted, whatever others
    failed from its address (issue 23, finding 5). No password hashing on the way."""

    keywords = TOKEN_KEYWORDS

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower().decode(errors="replace") not in self.keywords:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Token header must be 'Token <key>' with no spaces in the key.")
        user = user_for_key(parts[1].decode(errors="replace"))
        if user is None:
            blocked = token_blocked(request)
            token_failed(request)
            if blocked:
                raise exceptions.Throttled(wait=settings.HV_LOGIN_WINDOW_SECONDS, detail=THROTTLED_MESSAGE)
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return user, None

    def authenticate_header(self, request) -> str:
        return "Token"


class TokenSchemeExtension(OpenApiAuthenticationExtension):
    """The OpenAPI security scheme of :class:`TokenAuthentication` (drf-spectacular)."""

    target_class = "accounts.authentication.TokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "A personal API token (Tokens page): 'Token <key>' or 'Bearer <key>'.",
        }
