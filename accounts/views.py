"""The user's own settings: API tokens (make one, shown once; see them; revoke them) and the UI
language (the switcher in every page's header, kept in the profile and restored at log-in)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from annotation.access import as_id
from core.errors import DomainError
from core.security import LoginView as ThrottledLoginView

from . import services
from .models import ApiToken

#: where a new token waits, in the session, for the one page that shows it (issue 25)
NEW_TOKEN_KEY = "hv_new_api_token"


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """POST makes a token and redirects (a reload makes nothing); the GET after it shows the new
    token once, taken out of the session, so it is forgotten as soon as it is shown."""
    if request.method == "POST":
        try:
            _token, new_key = services.create_token(user=request.user, name=request.POST.get("name", ""))
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            request.session[NEW_TOKEN_KEY] = new_key
        return redirect("api_tokens")
    new_key = request.session.pop(NEW_TOKEN_KEY, None)
    rows = ApiToken.objects.filter(user=request.user)
    response = render(request, "accounts/tokens.html", {"tokens": rows, "new_key": new_key})
    response["Cache-Control"] = "no-store"  # the page that shows a new token is never cached
    return response


@login_required
@require_POST
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        services.revoke_token(user=request.user, token_id=as_id(token_id))
        messages.success(request, _("Token revoked: scripts using it now get 401."))
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("api_tokens")


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Django's ``set_language`` (the cookie, then back to ``next``), and for a logged-in user
    the choice is also kept in their preferences, so another browser gets it at log-in."""
    code = request.POST.get("language", "")
    if code not in dict(settings.LANGUAGES):
        # Django would set the cookie for any language it has a catalog of; the UI has these only
        request.POST = request.POST.copy()
        request.POST.pop("language", None)
    response = django_set_language(request)
    if request.user.is_authenticated and code in dict(settings.LANGUAGES):
        services.remember_language(user=request.user, code=code)
    return response


class LoginView(ThrottledLoginView):
    """The throttled login page; a successful log-in switches to the language kept in the user's
    preferences (it sets the same cookie the switcher sets)."""

    def form_valid(self, form) -> HttpResponse:
        response = super().form_valid(form)
        code = services.preferred_language(form.get_user())
        if code:
            response.set_cookie(
                settings.LANGUAGE_COOKIE_NAME,
                code,
                max_age=settings.LANGUAGE_COOKIE_AGE,
                path=settings.LANGUAGE_COOKIE_PATH,
                domain=settings.LANGUAGE_COOKIE_DOMAIN,
                secure=settings.LANGUAGE_COOKIE_SECURE,
                httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
                samesite=settings.LANGUAGE_COOKIE_SAMESITE,
            )
        return response
