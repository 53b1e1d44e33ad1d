"""The user's API tokens page: make one (shown once), see them, revoke them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.access import as_id
from core.errors import DomainError

from . import services
from .models import ApiToken


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    new_key = None
    if request.method == "POST":
        try:
            _token, new_key = services.create_token(user=request.user, name=request.POST.get("name", ""))
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect("api_tokens")
    rows = ApiToken.objects.filter(user=request.user)
    response = render(request, "accounts/tokens.html", {"tokens": rows, "new_key": new_key})
    response["Cache-Control"] = "no-store"  # the page that shows a new token is never cached
    return response


@login_required
@require_POST
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        services.revoke_token(user=request.user, token_id=as_id(token_id))
        messages.success(request, "Token revoked: scripts using it now get 401.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("api_tokens")
