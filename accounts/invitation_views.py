"""A project's annotator accounts and invitation links (researchers), and the page where an
invitation link is accepted (anyone holding the link). Thin: parse, call one service in
:mod:`accounts.invitations`, render or redirect.

A page that shows a new link is never cached and the link is in that one answer only; a
password typed into a form is never sent back (the password inputs do not render their value)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.access import as_id, managed_project_or_403
from annotation.models import Project
from core.errors import HTTP_STATUS, DomainError
from core.pages import form_error

from . import invitations
from .models import Invitation

ATTRIBUTES_HELP = gettext_lazy("one per line, e.g. nationality = China")


class AccountForm(forms.Form):
    username = forms.CharField(max_length=150, label=gettext_lazy("Username"))
    password1 = forms.CharField(
        label=gettext_lazy("Password"), strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label=gettext_lazy("Password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    attributes = forms.CharField(
        required=False,
        label=gettext_lazy("Profile attributes"),
        help_text=ATTRIBUTES_HELP,
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class InvitationForm(forms.Form):
    label = forms.CharField(
        max_length=100,
        required=False,
        label=gettext_lazy("For"),
        help_text=gettext_lazy("e.g. a name; only you see it"),
    )
    attributes = forms.CharField(
        required=False,
        label=gettext_lazy("Profile attributes you set"),
        help_text=ATTRIBUTES_HELP,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    ask = forms.CharField(
        required=False,
        label=gettext_lazy("Attributes the annotator enters"),
        help_text=gettext_lazy("one per line: nationality (free text), or nationality: China, Germany (one of these)"),
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    days = forms.IntegerField(
        min_value=1,
        max_value=invitations.MAX_DAYS,
        initial=invitations.DEFAULT_DAYS,
        label=gettext_lazy("Valid for days"),
    )


class AcceptForm(forms.Form):
    """A new account's username and password, then one field per attribute the link asks."""

    username = forms.CharField(max_length=150, label=gettext_lazy("Username"))
    password1 = forms.CharField(
        label=gettext_lazy("Password"), strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label=gettext_lazy("Password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, invitation: Invitation, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked = [a["attribute"] for a in invitation.ask]
        for asked in invitation.ask:
            key = asked["attribute"]
            if asked.get("choices"):
                field = forms.ChoiceField(choices=[("", "—"), *((c, c) for c in asked["choices"])], label=key)
            else:
                field = forms.CharField(max_length=invitations.MAX_VALUE, label=key)
            self.fields[f"about_{key}"] = field

    def answers(self) -> dict[str, str]:
        return {key: self.cleaned_data.get(f"about_{key}") or "" for key in self.asked}


# --------------------------------------------------------------------------- researchers
INVITATIONS_PER_PAGE = 100


def _page(
    request: HttpRequest,
    project: Project,
    *,
    account_form: AccountForm | None = None,
    invitation_form: InvitationForm | None = None,
    new_link: str | None = None,
    status: int = 200,
) -> HttpResponse:
    annotators = invitations.project_annotators(project)
    page = Paginator(invitations.project_invitations(project), INVITATIONS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [(i, invitations.state(i)) for i in page]
    response = render(
        request,
        "accounts/annotators.html",
        {
            "project": project,
            "annotators": annotators,
            "invitations": rows,
            "invitations_page": page,
            "account_form": account_form or AccountForm(),
            "invitation_form": invitation_form or InvitationForm(),
            "new_link": new_link,
        },
        status=status,
    )
    response["Cache-Control"] = "no-store"  # the answer that shows a new link is never cached
    return response


@login_required
@require_GET
def annotators_page(request: HttpRequest, project_id: int) -> HttpResponse:
    return _page(request, managed_project_or_403(request.user, project_id))


@login_required
@require_POST
def account_create(request: HttpRequest, project_id: int) -> HttpResponse:
    """Make an annotator's account (the researcher gives them the password by their own means)."""
    project = managed_project_or_403(request.user, project_id)
    form = AccountForm(request.POST)
    if form.is_valid():
        d = form.cleaned_data
        try:
            user = invitations.create_annotator_account(
                project=project,
                username=d["username"],
                password=d["password1"],
                password_again=d["password2"],
                attributes=invitations.parse_attributes(d["attributes"]),
            )
        except DomainError as exc:
            form_error(form, exc)
        else:
            messages.success(
                request, _("Account %(name)s made and added as an annotator.") % {"name": user.get_username()}
            )
            return redirect("project_annotators", project_id=project.id)
    return _page(request, project, account_form=form, status=400)


@login_required
@require_POST
def invitation_create(request: HttpRequest, project_id: int) -> HttpResponse:
    """Make a one-time invitation link; this answer is the only one that shows it."""
    project = managed_project_or_403(request.user, project_id)
    form = InvitationForm(request.POST)
    if form.is_valid():
        d = form.cleaned_data
        try:
            made = invitations.create_invitation(
                project=project,
                created_by=request.user,
                label=d["label"],
                attributes=invitations.parse_attributes(d["attributes"]),
                ask=invitations.parse_ask(d["ask"]),
                days=d["days"],
            )
        except DomainError as exc:
            form_error(form, exc)
        else:
            link = request.build_absolute_uri(reverse("invitation_accept", args=[made.token]))
            return _page(request, project, new_link=link)
    return _page(request, project, invitation_form=form, status=400)


@login_required
@require_POST
def invitation_revoke(request: HttpRequest, project_id: int, invitation_id: int) -> HttpResponse:
    project = managed_project_or_403(request.user, project_id)
    try:
        invitations.revoke_invitation(project=project, invitation_id=as_id(invitation_id))
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Invitation withdrawn: its link no longer works."))
    return redirect("project_annotators", project_id=project.id)


# --------------------------------------------------------------------------- the invitee
@require_http_methods(["GET", "POST"])
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    """The link: a form for a username, a password and what the link asks; then the new
    annotator is logged in and sent to the project's queue."""
    invitation = invitations.find_invitation(token)
    if invitation is None:
        return _invitee_page(
            request, problem=_("There is no such invitation link: check it was copied whole."), status=404
        )
    problem = invitations.refusal(invitation)
    if problem is not None:
        return _invitee_page(request, problem=problem.message, status=410)
    if request.user.is_authenticated:
        # the link makes a new account; joining it to whoever is logged in here would be a surprise
        return _invitee_page(
            request, invitation=invitation, logged_in=True, status=409 if request.method == "POST" else 200
        )
    form = AcceptForm(request.POST or None, invitation=invitation)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            user = invitations.accept_invitation(
                token=token,
                username=d["username"],
                password=d["password1"],
                password_again=d["password2"],
                answers=form.answers(),
            )
        except DomainError as exc:
            if exc.code in ("conflict", "not_found"):  # spent meanwhile
                return _invitee_page(request, problem=exc.message, status=HTTP_STATUS[exc.code])
            form_error(form, exc)
            for asked in invitation.ask:
                key = asked["attribute"]
                if isinstance(exc.errors, dict) and key in exc.errors:
                    form.add_error(f"about_{key}", exc.errors[key])
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(
                request,
                _("Welcome, %(name)s: you are an annotator of %(project)s.")
                % {"name": user.get_username(), "project": invitation.project.name},
            )
            return redirect("queue", project_id=invitation.project_id)
    return _invitee_page(request, invitation=invitation, form=form, status=400 if request.method == "POST" else 200)


def _invitee_page(request: HttpRequest, *, status: int = 200, **context) -> HttpResponse:
    response = render(request, "accounts/invitation.html", context, status=status)
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"  # the link's secret is in this page's address
    return response
