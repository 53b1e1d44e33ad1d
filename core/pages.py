"""How server-rendered pages show a :class:`core.errors.DomainError`.

A page view either re-renders its form with the message (``form_error``) or, for a POST that
redirects back to where it came from, flashes the message and redirects (``refused``). Views
never format a domain error themselves."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import redirect

from .errors import DomainError


def form_error(form: forms.Form, exc: DomainError) -> None:
    """Show the refusal on the form (non-field error), with per-field details where they name a field."""
    form.add_error(None, exc.message)
    if isinstance(exc.errors, dict):
        for name, detail in exc.errors.items():
            if name in form.fields:
                form.add_error(name, detail)


def refused(request: HttpRequest, exc: DomainError, to: str, **kwargs: object) -> HttpResponseRedirect:
    """Flash the refusal and go back to the named page (post/redirect/get)."""
    messages.error(request, exc.message)
    return redirect(to, **kwargs)


def form_problems(form: forms.Form) -> str:
    """A form's errors as one line, for a flashed message after a redirect."""
    return "; ".join(
        f"{name}: {' '.join(errs)}" if name != "__all__" else " ".join(errs) for name, errs in form.errors.items()
    )
